#ifndef NODESCOPE_VERSION_H
#define NODESCOPE_VERSION_H
/* The build's version (git describe), kept in one object so a new commit rebuilds only it. */
extern const char nodescope_version[];
#endif
