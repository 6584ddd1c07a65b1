/*
 * threads.c: the executor's optional worker pool, and how a step's work
 * is cut into parts that the pool runs side by side.
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
  struct TnKernThreads *pool;
  pthread_t thread;
  void *scratch;
} Worker;

struct TnKernThreads {
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
  const TnKernCall *k;
  const TnKernPart *parts;
  const void *in[TN_KERN_MAX_IN];
  void *out;
  int32_t status[TN_PROGRAM_MAX_THREADS];
};

static void run_part(struct TnKernThreads *t, int32_t i, void *scratch,
                     size_t size) {
  const TnKernPart *pt = &t->parts[i];
  const void *in[TN_KERN_MAX_IN];
  for (int32_t j = 0; j < t->k->nin; j++)
    in[j] = (const char *)t->in[j] + pt->in_off[j];
  t->status[i] = t->k->run(pt->params, in, (char *)t->out + pt->out_off,
                           scratch, size);
}

/* Claim and run parts of job `gen` until none is left. */
static void take_parts(struct TnKernThreads *t, uint32_t gen, void *scratch,
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
  struct TnKernThreads *t = w->pool;
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

int32_t tn__kernel_threads_run(TnKernThreads *t, const TnKernCall *k,
                               const TnKernPart *parts, int32_t nparts,
                               const void *const *in, void *out,
                               void *scratch, size_t scratch_size) {
  t->k = k;
  t->parts = parts;
  for (int32_t j = 0; j < k->nin; j++) t->in[j] = in[j];
  t->out = out;
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

/* ---- cutting a step into parts ------------------------------------------- */

/* Make `g` the convolution of output rows [r0, r1) of batch 1: the input
 * rows the band reads, from `*in_rows` on, and the padding above them
 * (below follows from the output size, as for any call). False when the
 * band reads no input row at all (it lies wholly in the padding). */
static bool conv_band(TnCrtConv2d *g, int32_t r0, int32_t r1,
                      int64_t *in_row, int64_t *out_row) {
  int64_t ext = (int64_t)(g->k_h - 1) * g->dilation_h + 1;
  int64_t first = (int64_t)r0 * g->stride_h - g->pad_top;
  int64_t end = (int64_t)(r1 - 1) * g->stride_h - g->pad_top + ext;
  int64_t lo = first < 0 ? 0 : first, hi = end > g->in_h ? g->in_h : end;
  if (hi <= lo) return false;
  g->pad_top = (int32_t)(lo - first);
  g->in_h = (int32_t)(hi - lo);
  g->out_h = r1 - r0;
  /* batch 1: the batch strides say only that the tensors are dense */
  g->in_strides[0] = g->in_strides[1] * g->in_h;
  g->out_strides[0] = g->out_strides[1] * g->out_h;
  *in_row = lo;
  *out_row = r0;
  return true;
}

/* A dense layer of batch 1 cut into blocks of output features, each a
 * whole number of the packed layouts' blocks of 16 (the last the rest):
 * a block's packed weights lie in a row from j0 * K on, as the [N, K]
 * weights of its rows from j0 * w_stride_n. */
static int32_t dense_split(const TnKernCall *k, int32_t n, TnKernPart *parts) {
  bool s8 = k->form == &tn__kernel_forms[TN_KF_dense_s8];
  /* d is the first field of both forms' parameters */
  const TnCrtDense *d = k->params;
  int32_t packed = s8 ? ((const TnKernP_dense_s8 *)k->params)->packed
                      : ((const TnKernP_dense_f32 *)k->params)->packed;
  size_t esize = s8 ? 1 : sizeof(float), size = k->form->params->size;
  int32_t blocks = (d->out_features + 15) / 16;
  if (d->batch != 1) return 0;
  if (n > blocks) n = blocks;
  for (int32_t i = 0; i < n && n > 1; i++) {
    int32_t n0 = blocks * i / n * 16;
    int32_t n1 = i == n - 1 ? d->out_features : blocks * (i + 1) / n * 16;
    void *copy = g_malloc(size);
    memcpy(copy, k->params, size);
    ((TnCrtDense *)copy)->out_features = n1 - n0;
    int64_t w = packed ? (int64_t)n0 * d->in_features
                       : (int64_t)n0 * d->w_stride_n;
    if (s8) {
      TnCrtQuant *q = &((TnKernP_dense_s8 *)copy)->q;
      if (q->per_channel) {
        q->channels = n1 - n0;
        if (q->multiplier) q->multiplier += n0;
        if (q->shift) q->shift += n0;
        if (q->scale) q->scale += n0;
      }
    }
    TnKernPart *pt = &parts[i];
    memset(pt, 0, sizeof *pt);
    pt->params = copy;
    pt->in_off[1] = (ptrdiff_t)(w * (int64_t)esize);
    pt->in_off[2] = (ptrdiff_t)n0 * 4; /* int32 or float bias */
    pt->out_off = (ptrdiff_t)n0 * (ptrdiff_t)esize;
  }
  return n > 1 ? n : 0;
}

int32_t tn__kernel_split(const TnKernCall *k, int32_t n, TnKernPart *parts) {
  const TnKernForm *s8 = &tn__kernel_forms[TN_KF_conv2d_s8];
  const TnKernForm *f32 = &tn__kernel_forms[TN_KF_conv2d_f32];
  if (k->compute != NULL || k->macs < SPLIT_MIN_MACS) return 0;
  if (k->form == &tn__kernel_forms[TN_KF_dense_s8] ||
      k->form == &tn__kernel_forms[TN_KF_dense_f32])
    return dense_split(k, n, parts);
  if (k->form != s8 && k->form != f32) return 0;
  /* g is the first field of both forms' parameters */
  const TnCrtConv2d *g = k->params;
  size_t esize = k->form == s8 ? 1 : sizeof(float);
  if (g->batch != 1 || g->out_h < 2) return 0;
  if (n > g->out_h) n = g->out_h;
  size_t size = k->form->params->size;
  int32_t made = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t r0 = (int32_t)((int64_t)g->out_h * i / n);
    int32_t r1 = (int32_t)((int64_t)g->out_h * (i + 1) / n);
    void *copy = g_malloc(size);
    memcpy(copy, k->params, size);
    int64_t in_row, out_row;
    if (!conv_band(copy, r0, r1, &in_row, &out_row)) {
      g_free(copy);
      break;
    }
    memset(&parts[made], 0, sizeof parts[made]);
    parts[made].params = copy;
    parts[made].in_off[0] = (ptrdiff_t)(in_row * g->in_strides[1] * esize);
    parts[made].out_off = (ptrdiff_t)(out_row * g->out_strides[1] * esize);
    made++;
  }
  if (made < n) { /* a band of padding alone: the step runs whole */
    for (int32_t i = 0; i < made; i++) g_free(parts[i].params);
    return 0;
  }
  return made;
}
