/*
 * session_nanopb.c: nanopb's runtime (third_party/nanopb, 0.4.7, zlib
 * licence) as one translation unit of the crt, on the crt's system header
 * (session_pb.h), so that no target needs extra include paths or flags.
 * Its functions are hidden where the compiler can hide them: a shared
 * libtvmnode does not export pb_decode and the rest, so an application
 * linking its own nanopb gets its own.
 */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

#include "session_pb.h"

#include "../third_party/nanopb/pb_common.c"
#include "../third_party/nanopb/pb_decode.c"
#include "../third_party/nanopb/pb_encode.c"

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
