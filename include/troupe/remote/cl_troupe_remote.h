/* cl_troupe_remote: the OpenCL extension of troupe's remote-device ICD (libtroupe-icd.so).
 *
 * Every platform the ICD serves lists "cl_troupe_remote" in CL_PLATFORM_EXTENSIONS and answers
 * clGetPlatformInfo(platform, CL_PLATFORM_REMOTE_ENDPOINT_TROUPE, ...) with the server's
 * "host:port" as a NUL-terminated string, so that a program can place work by location.
 * Platforms of other vendors return CL_INVALID_VALUE for it. */
#ifndef TROUPE_REMOTE_CL_TROUPE_REMOTE_H
#define TROUPE_REMOTE_CL_TROUPE_REMOTE_H

#define cl_troupe_remote 1
#define CL_PLATFORM_REMOTE_ENDPOINT_TROUPE 0x10E40

#endif
