// A runtime header that breaks the rules: check_includes.cmake must name it.
#pragma once
#include "core/sim/simulator.h"
