#include "version.h"

#include "version.gen.h"

const char nodescope_version[] = NODESCOPE_VERSION;
