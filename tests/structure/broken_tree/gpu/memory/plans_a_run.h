// A memory header that reaches up to the executor: check_includes.cmake must name it.
#pragma once
#include "gpu/executor/device_mapping.h"
