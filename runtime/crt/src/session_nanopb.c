/*
 * session_nanopb.c: nanopb's runtime (third_party/nanopb, 0.4.7, zlib
 * licence) as one translation unit of the crt, on the crt's system header
 * (session_pb.h), so that no target needs extra include paths or flags.
 */
#include "session_pb.h"

#include "../third_party/nanopb/pb_common.c"
#include "../third_party/nanopb/pb_decode.c"
#include "../third_party/nanopb/pb_encode.c"
