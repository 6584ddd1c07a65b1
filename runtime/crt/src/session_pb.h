/*
 * session_pb.h: nanopb's pb.h as the crt includes it (the generated
 * tvmnode_session.pb.h includes this, not pb.h). It is also pb.h's system
 * header (PB_SYSTEM_HEADER): the freestanding headers and memcpy/memset
 * from crt_libc.h, so that the session's messages compile where the target
 * has no <string.h>. nanopb's allocation stays off (no PB_ENABLE_MALLOC).
 * Private to runtime/crt.
 */
#ifndef TVMNODE_CRT_SESSION_PB_H_
#define TVMNODE_CRT_SESSION_PB_H_

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crt_libc.h"

/* resolved from third_party/nanopb/pb.h, which includes it */
#define PB_SYSTEM_HEADER "../../src/session_pb.h"
#include "../third_party/nanopb/pb.h"

#endif /* TVMNODE_CRT_SESSION_PB_H_ */
