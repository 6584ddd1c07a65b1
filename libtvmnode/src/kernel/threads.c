/*
 * threads.c: the worker pool (tn_thread_pool_*, tvmnode/kernel.h) that
 * the executor's optional threads and the compiled Modules' run parts on,
 * and which of the executor's steps are cut (how a call is cut is the
 * crt's, split.c, which generated code cuts with too).
 *
 * The crt stays single-threaded and allocation-free: a part is an
 * ordinary call of the step's kernel on a smaller geometry (a band of a
 * convolution's output rows, with the input rows that band reads and the
 * padding adjusted to match; or a dense layer's block of output features,
 * its weights, bias and multipliers from that block on), prepared once
 * when the threads are set, so a run allocates nothing. Every output
 * element of a part is computed from the same inputs by the same
 * arithmetic as in the whole call, so the int8 outputs are the same bytes
 * for any number of parts; a float layer's parts may take another ISA
 * form than the whole (a form is chosen from the geometry), within
 * rounding of it. The pool is n - 1 pthreads plus the caller. A step's
 * parts are claimed, not assigned: one atomic word holds the job's
 * generation, its part count and the next part, and the caller and the
 * workers take parts from it until none is left, so a worker the OS has
 * not scheduled yet (a busy machine) costs nothing: the caller runs the
 * parts, and waits only for parts a worker has actually begun. Workers
 * spin on the word for a short while before they sleep on a condition
 * variable (a model's steps follow each other within microseconds; a
 * futex wake-up per step would cost as much as a small layer). Each thread
 * has its own scratch (the caller the plan's), sized once for the largest
 * step cut.
 */
#include "kernel/kernel_internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* The least stack a worker thread gets (bytes). */
#define TN_KERN_THREAD_STACK ((size_t)1 << 20)

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

/* Spins of a waiting thread before it sleeps (some 50-150 us). */
#define SPINS 4000
/* The least multiply-accumulates a step must have to be cut, so that a
 * part outweighs handing it over (a guess: not tuned on a quiet machine). */
#define SPLIT_MIN_MACS 65536

/* The claim word: generation (32 bits), parts (16), next part (16). */
#define CLAIM(gen, n, next) \
  ((uint64_t)(gen) << 32 | (uint64_t)(n) << 16 | (uint64_t)(next))
#define CLAIM_GEN(c) ((uint32_t)((c) >> 32))
#define CLAIM_N(c) ((int32_t)(((c) >> 16) & 0xffff))
#define CLAIM_NEXT(c) ((int32_t)((c) & 0xffff))

typedef struct Worker {
  struct TnThreadPool *pool;
  pthread_t thread;
  void *scratch;
} Worker;

struct TnThreadPool {
  int32_t n;
  size_t scratch_size;
  char *scratch_block;
  Worker *workers; /* n - 1 */
  int32_t started;
  pthread_mutex_t mu;
  pthread_cond_t go, done;
  _Atomic uint64_t claim;
  atomic_int finished; /* parts of the job done */
  atomic_int sleeping; /* workers waiting on go */
  atomic_int quit;
  /* the job: written before its claim word is published, read by a
   * thread only after it has claimed a part of it */
  TnPartFn fn;
  void *ctx;
  int32_t status[TN_THREAD_POOL_MAX_PARTS];
};

static void run_part(struct TnThreadPool *t, int32_t i, void *scratch,
                     size_t size) {
  t->status[i] = t->fn(t->ctx, i, scratch, size);
}

/* Claim and run parts of job `gen` until none is left. */
static void take_parts(struct TnThreadPool *t, uint32_t gen, void *scratch,
                       size_t size) {
  uint64_t c = atomic_load_explicit(&t->claim, memory_order_acquire);
  while (CLAIM_GEN(c) == gen && CLAIM_NEXT(c) < CLAIM_N(c)) {
    if (!atomic_compare_exchange_weak_explicit(&t->claim, &c, c + 1,
                                               memory_order_acq_rel,
                                               memory_order_acquire))
      continue;
    int32_t n = CLAIM_N(c);
    run_part(t, CLAIM_NEXT(c), scratch, size);
    if (atomic_fetch_add_explicit(&t->finished, 1, memory_order_acq_rel) ==
        n - 1) {
      pthread_mutex_lock(&t->mu);
      pthread_cond_signal(&t->done);
      pthread_mutex_unlock(&t->mu);
    }
    c = atomic_load_explicit(&t->claim, memory_order_acquire);
  }
}

static void *worker_main(void *arg) {
  Worker *w = arg;
  struct TnThreadPool *t = w->pool;
  uint32_t seen = 0;
  for (;;) {
    uint32_t g = CLAIM_GEN(atomic_load_explicit(&t->claim,
                                                memory_order_acquire));
    for (int s = 0; g == seen && s < SPINS; s++) {
      if (atomic_load_explicit(&t->quit, memory_order_relaxed)) break;
      CPU_RELAX();
      g = CLAIM_GEN(atomic_load_explicit(&t->claim, memory_order_acquire));
    }
    if (g == seen) {
      pthread_mutex_lock(&t->mu);
      atomic_fetch_add(&t->sleeping, 1);
      while ((g = CLAIM_GEN(atomic_load(&t->claim))) == seen &&
             !atomic_load(&t->quit))
        pthread_cond_wait(&t->go, &t->mu);
      atomic_fetch_sub(&t->sleeping, 1);
      pthread_mutex_unlock(&t->mu);
    }
    if (atomic_load(&t->quit)) break;
    seen = g;
    take_parts(t, g, w->scratch, t->scratch_size);
  }
  return NULL;
}

void tn__kernel_threads_free(TnKernThreads *t) {
  if (t == NULL) return;
  pthread_mutex_lock(&t->mu);
  atomic_store(&t->quit, 1);
  pthread_cond_broadcast(&t->go);
  pthread_mutex_unlock(&t->mu);
  for (int32_t i = 0; i < t->started; i++)
    pthread_join(t->workers[i].thread, NULL);
  pthread_cond_destroy(&t->go);
  pthread_cond_destroy(&t->done);
  pthread_mutex_destroy(&t->mu);
  g_free(t->scratch_block);
  g_free(t->workers);
  g_free(t);
}

TnKernThreads *tn__kernel_threads_new(int32_t n, size_t scratch_size,
                                      const char *who) {
  TnKernThreads *t = g_new0(TnKernThreads, 1);
  t->n = n;
  t->scratch_size = scratch_size;
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->go, NULL);
  pthread_cond_init(&t->done, NULL);
  t->workers = g_new0(Worker, n - 1);
  /* each worker's scratch 64-byte aligned, as the arena's buffers are */
  size_t stride = (scratch_size + 63) & ~(size_t)63;
  if (stride > 0) t->scratch_block = g_malloc(stride * (size_t)(n - 1) + 64);
  uintptr_t base = ((uintptr_t)t->scratch_block + 63) & ~(uintptr_t)63;
  /* the x86 convolution forms keep some 112 KB of tables on the stack:
   * a worker's stack is at least TN_KERN_THREAD_STACK, whatever the C
   * library's default (glibc's 8 MB; musl's 128 KB would not do) */
  pthread_attr_t attr;
  size_t stack = 0;
  pthread_attr_init(&attr);
  if (pthread_attr_getstacksize(&attr, &stack) == 0 &&
      stack < TN_KERN_THREAD_STACK)
    pthread_attr_setstacksize(&attr, TN_KERN_THREAD_STACK);
  for (int32_t i = 0; i < n - 1; i++) {
    Worker *w = &t->workers[i];
    w->pool = t;
    w->scratch = stride > 0 ? (void *)(base + stride * (size_t)i) : NULL;
    int rc = pthread_create(&w->thread, &attr, worker_main, w);
    if (rc != 0) {
      pthread_attr_destroy(&attr);
      tn__kernel_threads_free(t);
      tn_error_raise_in(TN_ERR_RUNTIME, who, "could not start worker thread "
                        "%d of %d (pthread_create: %s)", i + 1, n - 1,
                        g_strerror(rc));
      return NULL;
    }
    t->started++;
  }
  pthread_attr_destroy(&attr);
  return t;
}

static int32_t pool_run(TnKernThreads *t, TnPartFn fn, void *ctx,
                        int32_t nparts, void *scratch, size_t scratch_size) {
  t->fn = fn;
  t->ctx = ctx;
  atomic_store_explicit(&t->finished, 0, memory_order_relaxed);
  uint32_t gen = CLAIM_GEN(atomic_load_explicit(&t->claim,
                                                memory_order_relaxed)) + 1;
  if (gen == 0) gen = 1; /* 0 is what a new worker has seen */
  atomic_store(&t->claim, CLAIM(gen, nparts, 0));
  if (atomic_load(&t->sleeping) > 0) {
    pthread_mutex_lock(&t->mu);
    pthread_cond_broadcast(&t->go);
    pthread_mutex_unlock(&t->mu);
  }
  take_parts(t, gen, scratch, scratch_size);
  /* every part is claimed: wait for the ones a worker is running */
  for (int s = 0; s < SPINS && atomic_load_explicit(
                                   &t->finished, memory_order_acquire) <
                                   nparts;
       s++)
    CPU_RELAX();
  if (atomic_load_explicit(&t->finished, memory_order_acquire) < nparts) {
    pthread_mutex_lock(&t->mu);
    while (atomic_load_explicit(&t->finished, memory_order_acquire) < nparts)
      pthread_cond_wait(&t->done, &t->mu);
    pthread_mutex_unlock(&t->mu);
  }
  for (int32_t i = 0; i < nparts; i++)
    if (t->status[i] != TN_CRT_OK) return t->status[i];
  return TN_CRT_OK;
}

/* ---- the public pool ------------------------------------------------------- */

TN_API TnThreadPool *tn_thread_pool_new(int64_t n, size_t scratch_size) {
  const char *who = "tn_thread_pool_new";
  if (n < 2 || n > TN_PROGRAM_MAX_THREADS)
    return tn_error_raise_in(TN_ERR_VALUE, who, "argument n (threads): "
                             "expected 2 to %d, got %" PRId64,
                             TN_PROGRAM_MAX_THREADS, n), NULL;
  return tn__kernel_threads_new((int32_t)n, scratch_size, who);
}

TN_API void tn_thread_pool_free(TnThreadPool *pool) {
  tn__kernel_threads_free(pool);
}

TN_API int32_t tn_thread_pool_size(const TnThreadPool *pool) {
  return pool ? pool->n : 0;
}

TN_API size_t tn_thread_pool_scratch_size(const TnThreadPool *pool) {
  return pool ? pool->scratch_size : 0;
}

TN_API int32_t tn_thread_pool_run(TnThreadPool *pool, TnPartFn fn, void *ctx,
                                  int32_t nparts, void *scratch,
                                  size_t scratch_size) {
  if (pool == NULL || fn == NULL || nparts < 1 ||
      nparts > TN_THREAD_POOL_MAX_PARTS)
    return TN_CRT_INVALID_ARGUMENT;
  return pool_run(pool, fn, ctx, nparts, scratch, scratch_size);
}

/* ---- the executor's steps ------------------------------------------------- */

typedef struct {
  const TnKernCall *k;
  const TnKernPart *parts;
  const void *const *in;
  void *out;
} StepJob;

static int32_t step_part(void *ctx, int32_t i, void *scratch, size_t size) {
  const StepJob *j = ctx;
  const TnKernPart *pt = &j->parts[i];
  const void *in[TN_KERN_MAX_IN];
  for (int32_t x = 0; x < j->k->nin; x++)
    in[x] = (const char *)j->in[x] + pt->in_off[x];
  return j->k->run(pt->params, in, (char *)j->out + pt->out_off, scratch,
                   size);
}

int32_t tn__kernel_threads_run(TnKernThreads *t, const TnKernCall *k,
                               const TnKernPart *parts, int32_t nparts,
                               const void *const *in, void *out,
                               void *scratch, size_t scratch_size) {
  StepJob j = {k, parts, in, out};
  return pool_run(t, step_part, &j, nparts, scratch, scratch_size);
}

/* ---- cutting a step into parts ------------------------------------------- */

int32_t tn__kernel_split_kind(const TnKernCall *k) {
  if (k->compute != NULL || k->macs < SPLIT_MIN_MACS) return 0;
  if (k->form == &tn__kernel_forms[TN_KF_conv2d_s8])
    return TN_CRT_SPLIT_CONV2D_S8;
  if (k->form == &tn__kernel_forms[TN_KF_conv2d_f32])
    return TN_CRT_SPLIT_CONV2D_F32;
  if (k->form == &tn__kernel_forms[TN_KF_dense_s8])
    return TN_CRT_SPLIT_DENSE_S8;
  if (k->form == &tn__kernel_forms[TN_KF_dense_f32])
    return TN_CRT_SPLIT_DENSE_F32;
  return 0;
}

int32_t tn__kernel_split(const TnKernCall *k, int32_t n, TnKernPart *parts) {
  int32_t kind = tn__kernel_split_kind(k);
  int32_t np = kind ? tn_crt_split_count(kind, k->params, n) : 0;
  for (int32_t i = 0; i < np; i++) {
    TnCrtSplitParams *copy = g_new(TnCrtSplitParams, 1);
    ptrdiff_t in_off[3], out_off = 0;
    memset(&parts[i], 0, sizeof parts[i]);
    int32_t st = tn_crt_split_part(kind, k->params, i, np, copy, in_off,
                                   &out_off);
    g_assert(st == TN_CRT_OK); /* np parts: each one exists */
    parts[i].params = copy;
    for (int32_t j = 0; j < 3 && j < TN_KERN_MAX_IN; j++)
      parts[i].in_off[j] = in_off[j];
    parts[i].out_off = out_off;
  }
  return np;
}
