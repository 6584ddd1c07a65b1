/*
 * tvmnode/crt/session.h: a device session's requests answered on the
 * device (issue 31).
 *
 * A host (go/serve/device) sends requests in REQUEST frames over a link
 * (tvmnode/crt/frame.h); each body is a tvmnode.session.Request of
 * runtime/crt/proto/tvmnode_session.proto, decoded here with nanopb:
 *
 * - metadata: a model's inputs and outputs (names, element types, shapes,
 *   sizes, quantization), its multiply-accumulates and the device's clock;
 * - infer: the raw bytes of every input, written straight into the
 *   instance's input buffers; the model runs once through the firmware API
 *   (tn_crt_run), and with repeat > 0 then `repeat` times `number` runs,
 *   each repeat timed with the application's clock. The answer carries the
 *   raw bytes of every output (of the first run) and the ticks of each
 *   repeat.
 *
 * tn_crt_session_answer writes the Response (the same id) into the
 * application's buffer; the application sends it in a RESPONSE frame. A
 * request that cannot be answered (bytes that are not a Request, an unknown
 * model, an input of the wrong size, a failed run, an answer larger than
 * the buffer) is answered with an Error: a TnCrtStatus code and a message
 * naming what was expected and what was received. Nothing here allocates;
 * the messages are decoded and encoded on the stack (tn_crt_session_answer's
 * own frame is 2,176 bytes at -Os on a Cortex-M4, nanopb's calls and the
 * model's run come on top) and the tensors never leave the model's
 * buffers.
 *
 * Like all of the crt, this header needs only <stdint.h> and <stddef.h>.
 */
#ifndef TVMNODE_CRT_SESSION_H_
#define TVMNODE_CRT_SESSION_H_

#include <stddef.h>
#include <stdint.h>

#include "tvmnode/crt/model.h"
#include "tvmnode/crt/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most repeats an infer request may ask for (the answer's bound). */
#define TN_CRT_SESSION_MAX_REPEAT 32u
/* The most inputs or outputs a model served here has, and the longest
 * model or tensor name (the messages' bounds). */
#define TN_CRT_SESSION_MAX_IO 8
#define TN_CRT_SESSION_MAX_NAME 31
/* The longest error message (bytes, without its terminating 0). */
#define TN_CRT_SESSION_MAX_MESSAGE 95

/* The application's clock: a count that grows (SysTick ticks). */
typedef uint64_t (*TnCrtSessionClock)(void *ctx);

/* A session over the application's instances (each initialised for its
 * model with every input and output bound, and its devices and state set:
 * ready for tn_crt_run). Fields are read-only to the application but for
 * the clock, set with tn_crt_session_set_clock. */
typedef struct {
  TnCrtInstance *const *instances;
  int32_t num_instances;
  TnCrtSessionClock clock; /* NULL: timed requests are UNSUPPORTED */
  void *clock_ctx;
  uint32_t ticks_per_second;
  uint32_t instructions_per_tick; /* 0 when unknown */
  uint32_t requests;              /* answered since init */
  uint32_t errors;                /* of them, answered with an Error */
  int32_t last_status;            /* of the last request answered */
} TnCrtSession;

/* A session serving instances[0 .. num_instances), looked up by their
 * model's name (an empty name in a request is the first). NULL_POINTER for
 * a NULL s or instances, INVALID_ARGUMENT for num_instances < 1. The
 * instances are checked at each request, not here. */
int32_t tn_crt_session_init(TnCrtSession *s, TnCrtInstance *const *instances,
                            int32_t num_instances);

/* The clock timed requests read, ticking ticks_per_second times a second
 * (instructions_per_tick: what a tick is in instructions, on an emulated
 * board; 0 when unknown). NULL_POINTER for a NULL s. */
int32_t tn_crt_session_set_clock(TnCrtSession *s, TnCrtSessionClock clock,
                                 void *ctx, uint32_t ticks_per_second,
                                 uint32_t instructions_per_tick);

/* Answers the request req[0 .. len): writes a Response into out[0 .. cap)
 * and its length into *out_len. OK whenever an answer was written, an
 * Error answer included (its code is then s->last_status);
 * NULL_POINTER for a NULL s, out or out_len, or a NULL req with len > 0;
 * SCRATCH_TOO_SMALL when not even the Error answer fits in cap (nothing
 * to send then: the host's request times out). */
int32_t tn_crt_session_answer(TnCrtSession *s, const uint8_t *req, size_t len,
                              uint8_t *out, size_t cap, size_t *out_len);

#ifdef __cplusplus
}
#endif

#endif /* TVMNODE_CRT_SESSION_H_ */
