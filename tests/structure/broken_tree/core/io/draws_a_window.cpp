// Core code with Qt in it: check_includes.cmake must name it.
#include <QWidget>
