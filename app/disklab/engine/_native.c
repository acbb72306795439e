/* The engine's accounting loop (engine/loop.py's `run`) in C, for the pread/pwrite and the
 * io_uring paths: the same requests, the same counters and samples in the same shared memory.
 *
 * Why: at 4 KiB the interpreter's work between a completion and the next request (~2-5 us a
 * request on a 2-vCPU VM) is in series with the device at queue depth 1 and holds requests out
 * of the device at any depth; bench figure 4 measured the engine at 0.88-0.96 of fio for that
 * alone (bench/README.md). Here a request costs what fio's loop costs, and the loop runs
 * without the GIL, so a worker's pread/pwrite threads run side by side.
 *
 * What stays in Python: the ring's setup and registration (uring.py), the order's tables
 * (worker.py), the choice of path, the report. engine/native.py hands this module those, and
 * engine/loop.py stays the reference and the fallback (a machine without a C compiler at
 * install: the extension is optional). The two loops must count alike: tests/unit/
 * test_engine_native.py runs both on the same file and compares.
 *
 * Shared memory as loop.py lays it out: slot ti's int64 fields at fields[ti * FIELDS + f];
 * its latency samples from lat[lat_at], at most `samples` of them. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif

/* loop.py's field numbers and error kinds (native.py checks they agree) */
enum { OPS, LAT_SUM, LAT_MAX, STARTED, SAMPLES, ERR_KIND, ERR_ERRNO, ERR_N, ENDED };
#define FIELDS 16
enum { NO_ERROR, OS_ERROR, SHORT };

/* io_uring_enter's flags and the failures that are not the run's (uring.py's RETRY) */
#define ENTER_GETEVENTS 1u
#define ENTER_EXT_ARG 8u
#define WAIT_NS 200000000LL

/* The order a share visits: worker.block_order's three kinds. */
enum { ORDER_RANGE, ORDER_TABLE, ORDER_GRID };
typedef struct {
    int kind;
    long long n, scale, m, q, grid;
    const int64_t *table, *p, *pq, *tail;
} Order;

typedef struct {
    Order order;
    long long first, step, bs, samples;
    int wrap;
    volatile int64_t *f; /* this slot's fields */
    int64_t *lat;        /* its samples */
    volatile uint8_t *halt;
} Share;

typedef struct Path Path;
struct Path {
    int depth, split;
    int64_t inflight;
    int *slot;       /* the batch: slot and byte offset of each request */
    int64_t *offset;
    /* submit the first n of the batch and reap at least one completion into done_*; 0 or the
     * errno of the path's own failure */
    int (*submit_reap)(Path *, int n, int *done_slot, int64_t *done_res, int *count);
    int (*submit)(Path *, int n);
    /* psync */
    int fd, write;
    char *block;
    size_t size;
    /* io_uring */
    int ring_fd;
    int64_t *sqes;
    volatile uint32_t *sq_tail, *sq_array, *cq_head, *cq_tail;
    uint32_t sq_mask, cq_mask, tail, head, to_submit;
    const char *cqes;
    struct { uint64_t sigmask; uint32_t sigmask_sz, min_wait_usec; uint64_t ts; } arg;
    struct { int64_t sec, nsec; } timeout;
};

static inline int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t); /* time.perf_counter_ns's clock on Linux */
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline int64_t order_at(const Order *o, int64_t i) {
    if (o->kind == ORDER_RANGE)
        return i * o->scale;
    if (o->kind == ORDER_TABLE)
        return o->table[i];
    if (i < o->grid)
        return (o->p[i % o->m] * o->q + o->pq[i / o->m]) * o->scale;
    return (o->grid + o->tail[i - o->grid]) * o->scale;
}

static void fail(Share *s, int kind, int64_t code, int64_t n) {
    if (s->f[ERR_KIND] == NO_ERROR) {
        s->f[ERR_ERRNO] = code;
        s->f[ERR_N] = n;
        s->f[ERR_KIND] = kind;
    }
    *s->halt = 1;
}

/* ---- pread/pwrite: one request in flight, its call both submission and completion ---- */

static int psync_submit_reap(Path *io, int n, int *done_slot, int64_t *done_res, int *count) {
    ssize_t r;
    *count = 0;
    if (!n)
        return 0;
    do {
        r = io->write ? pwrite(io->fd, io->block, io->size, io->offset[0])
                      : pread(io->fd, io->block, io->size, io->offset[0]);
    } while (r < 0 && errno == EINTR); /* as Python's os.preadv retries (PEP 475) */
    if (r < 0)
        return errno ? errno : EIO;
    done_slot[0] = 0;
    done_res[0] = r;
    *count = 1;
    return 0;
}

static int never_submit(Path *io, int n) {
    (void)io;
    (void)n;
    return EINVAL;
}

/* ---- io_uring: the ring uring.py set up; entries' fixed words written there ---- */

static int ring_enter(Path *io, unsigned min_complete, unsigned flags) {
    for (;;) {
        long r = syscall(__NR_io_uring_enter, io->ring_fd, io->to_submit, min_complete, flags,
                         flags & ENTER_EXT_ARG ? (void *)&io->arg : NULL,
                         flags & ENTER_EXT_ARG ? sizeof io->arg : 0);
        if (r >= 0) {
            io->to_submit -= (uint32_t)r; /* fewer taken: the rest go with the next enter */
            return 0;
        }
        if (errno == EINTR || errno == ETIME || errno == EAGAIN || errno == EBUSY)
            return 0; /* a signal, the wait's timeout, a moment short of memory: not the run's */
        return errno;
    }
}

static void ring_publish(Path *io, int n) {
    for (int k = 0; k < n; k++) {
        int slot = io->slot[k];
        io->sqes[8 * slot + 1] = io->offset[k]; /* word 1: the request's offset */
        io->sq_array[io->tail & io->sq_mask] = (uint32_t)slot;
        io->tail++;
    }
    __atomic_store_n(io->sq_tail, io->tail, __ATOMIC_RELEASE); /* after the entries */
    io->to_submit += (uint32_t)n;
}

static int ring_submit(Path *io, int n) {
    ring_publish(io, n);
    io->inflight += n;
    return ring_enter(io, 0, 0);
}

static int ring_submit_reap(Path *io, int n, int *done_slot, int64_t *done_res, int *count) {
    ring_publish(io, n);
    io->inflight += n;
    int err = ring_enter(io, 1, ENTER_GETEVENTS | ENTER_EXT_ARG);
    if (err)
        return err;
    uint32_t tail = __atomic_load_n(io->cq_tail, __ATOMIC_ACQUIRE);
    int c = (int)(tail - io->head);
    if (c > io->depth) /* never more than were in flight; the rest, if any, stay for later */
        c = io->depth;
    for (int k = 0; k < c; k++) {
        const char *cqe = io->cqes + 16 * ((io->head + (uint32_t)k) & io->cq_mask);
        done_slot[k] = (int)*(const uint64_t *)cqe; /* user_data: the slot */
        done_res[k] = *(const int32_t *)(cqe + 8);
    }
    io->head += (uint32_t)c;
    __atomic_store_n(io->cq_head, io->head, __ATOMIC_RELEASE); /* copied out: the kernel may reuse */
    io->inflight -= c;
    *count = c;
    return 0;
}

/* ---- the loop: loop.py's `run`, statement for statement ---- */

typedef struct {
    int64_t ops, lat_sum, lat_max, kept, mask, limit;
} Tally;

static int fill(Share *s, Path *io, int64_t *p) {
    int n = 0;
    while (n < io->depth && !*s->halt) {
        if (*p >= s->order.n) {
            if (!s->wrap)
                break;
            *p %= s->order.n;
        }
        io->slot[n] = n;
        io->offset[n] = order_at(&s->order, *p);
        *p += s->step;
        n++;
    }
    return n;
}

static inline void count(Share *s, Tally *t, int64_t d) {
    t->ops++;
    t->lat_sum += d;
    if (d > t->lat_max)
        t->lat_max = d;
    if (!(t->ops & t->mask) && t->kept < s->samples)
        s->lat[t->kept++] = d;
}

static void halve(Share *s, Tally *t) {
    /* keep the samples of every 2nd sampled request (loop.py: lat = lat[1::2]) */
    int64_t half = t->kept / 2;
    for (int64_t i = 0; i < half; i++)
        s->lat[i] = s->lat[2 * i + 1];
    t->kept = half;
    t->mask = t->mask * 2 + 1;
}

/* One batch's completions: counted; each done slot given the order's next request. Returns
 * the requests prepared for the next submit_reap, or -1 when a part's submit failed (*err). */
static int account(Share *s, Path *io, Tally *t, int64_t *sub, int64_t *p, const int *done_slot,
                   const int64_t *done_res, int c, int *err) {
    int64_t now = now_ns(), blocks = s->order.n, last = *s->halt ? 0 : blocks;
    int n = 0;
    for (int k = 0; k < c; k++) {
        int slot = done_slot[k];
        int64_t res = done_res[k];
        if (res != s->bs) {
            if (res < 0)
                fail(s, OS_ERROR, -res, 0);
            else
                fail(s, SHORT, 0, res);
            last = 0;
            continue;
        }
        count(s, t, now - sub[slot]);
        if (*p >= last) { /* the order's end, or halted */
            if (!(s->wrap && last))
                continue;
            *p %= blocks; /* a time-based run wraps around the file */
        }
        io->slot[n] = slot;
        io->offset[n] = order_at(&s->order, *p);
        sub[slot] = now; /* the request's clock starts as it is prepared (fio's too) */
        *p += s->step;
        n++;
        if (n == io->split) { /* a long batch: its first requests go to the device now */
            *err = io->submit(io, n);
            if (*err)
                return -1;
            n = 0;
        }
    }
    return n;
}

static int run_loop(Share *s, Path *io) {
    int cap = io->depth * 2 + 2, c = 0, err = 0;
    int64_t *sub = malloc(sizeof(int64_t) * (size_t)io->depth);
    int *done_slot = malloc(sizeof(int) * (size_t)cap);
    int64_t *done_res = malloc(sizeof(int64_t) * (size_t)cap);
    io->slot = malloc(sizeof(int) * (size_t)io->depth);
    io->offset = malloc(sizeof(int64_t) * (size_t)io->depth);
    if (!sub || !done_slot || !done_res || !io->slot || !io->offset) {
        free(sub), free(done_slot), free(done_res), free(io->slot), free(io->offset);
        return ENOMEM;
    }
    Tally t = {0, 0, 0, 0, 0, s->samples - io->depth};
    int64_t p = s->first;
    s->f[STARTED] = now_ns();
    int n = fill(s, io, &p);
    int64_t start = now_ns();
    for (int k = 0; k < io->depth; k++)
        sub[k] = start;
    while (n || io->inflight) {
        if ((err = io->submit_reap(io, n, done_slot, done_res, &c)))
            break;
        if ((n = account(s, io, &t, sub, &p, done_slot, done_res, c, &err)) < 0)
            break;
        s->f[OPS] = t.ops;
        if (t.kept > t.limit) /* a batch adds at most depth samples: never past the space */
            halve(s, &t);
    }
    if (err)
        fail(s, OS_ERROR, err, 0);
    /* the I/O ends at the last completion reaped: the path's teardown is not timed */
    s->f[ENDED] = now_ns();
    s->f[OPS] = t.ops;
    s->f[LAT_SUM] = t.lat_sum;
    s->f[LAT_MAX] = t.lat_max;
    s->f[SAMPLES] = t.kept < s->samples ? t.kept : s->samples;
    free(sub), free(done_slot), free(done_res), free(io->slot), free(io->offset);
    io->slot = NULL, io->offset = NULL;
    return 0;
}

/* ---- the Python side: buffers in, the loop run without the GIL ---- */

typedef struct {
    Py_buffer fields, lat, halt, t1, t2, t3;
} Buffers;

static void release(Buffers *b) {
    Py_buffer *all[] = {&b->fields, &b->lat, &b->halt, &b->t1, &b->t2, &b->t3};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->obj)
            PyBuffer_Release(all[i]);
}

/* share = (kind, n, scale, m, q, grid, t1, t2, t3, first, step, wrap, bs, ti, samples, lat_at,
 * fields, lat, halt): the order's tables are int64 buffers (None where the kind has none). */
static int parse_share(PyObject *share, Share *s, Buffers *b) {
    PyObject *o1, *o2, *o3;
    long long ti, lat_at;
    memset(b, 0, sizeof *b);
    memset(s, 0, sizeof *s);
    if (!PyArg_ParseTuple(share, "iLLLLLOOOLLpLLLLw*w*w*:share", &s->order.kind, &s->order.n,
                          &s->order.scale, &s->order.m, &s->order.q, &s->order.grid, &o1, &o2,
                          &o3, &s->first, &s->step, &s->wrap, &s->bs, &ti, &s->samples, &lat_at,
                          &b->fields, &b->lat, &b->halt))
        return -1;
    PyObject *objs[] = {o1, o2, o3};
    Py_buffer *bufs[] = {&b->t1, &b->t2, &b->t3};
    for (int i = 0; i < 3; i++)
        if (objs[i] != Py_None && PyObject_GetBuffer(objs[i], bufs[i], PyBUF_SIMPLE) < 0)
            goto bad;
    int64_t order_bytes = s->order.kind == ORDER_TABLE ? s->order.n * 8 : 0;
    if (s->order.kind < ORDER_RANGE || s->order.kind > ORDER_GRID || s->order.n < 0
        || (s->order.kind == ORDER_TABLE && b->t1.len < order_bytes)
        || (s->order.kind == ORDER_GRID
            && (s->order.m < 1 || b->t1.len < s->order.m * 8 || b->t2.len < s->order.q * 8
                || b->t3.len < (s->order.n - s->order.grid) * 8))
        || ti < 0 || (ti + 1) * FIELDS * 8 > b->fields.len || s->samples < 0 || lat_at < 0
        || (lat_at + s->samples) * 8 > b->lat.len || b->halt.len < 1 || s->step < 1
        || s->first < 0) {
        PyErr_SetString(PyExc_ValueError, "share: a table or the shared memory is too small");
        goto bad;
    }
    s->order.table = s->order.p = b->t1.buf;
    s->order.pq = b->t2.buf;
    s->order.tail = b->t3.buf;
    s->f = (volatile int64_t *)b->fields.buf + ti * FIELDS;
    s->lat = (int64_t *)b->lat.buf + lat_at;
    s->halt = b->halt.buf;
    return 0;
bad:
    release(b);
    return -1;
}

static PyObject *finish(Share *s, Path *io, Buffers *b) {
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = run_loop(s, io);
    Py_END_ALLOW_THREADS
    release(b);
    if (err)
        return PyErr_NoMemory();
    return PyLong_FromLongLong(io->inflight);
}

PyDoc_STRVAR(run_psync_doc,
"run_psync(share, fd, write, block) -> 0\n\n"
"loop.run over one pread/pwrite slot: block is its writable buffer of share's block size.");

static PyObject *run_psync(PyObject *self, PyObject *args) {
    PyObject *share;
    Py_buffer block;
    Share s;
    Buffers b;
    Path io;
    memset(&io, 0, sizeof io);
    if (!PyArg_ParseTuple(args, "Oipw*:run_psync", &share, &io.fd, &io.write, &block))
        return NULL;
    if (parse_share(share, &s, &b) < 0) {
        PyBuffer_Release(&block);
        return NULL;
    }
    if (block.len < s.bs || s.bs < 1) {
        PyBuffer_Release(&block);
        release(&b);
        return PyErr_Format(PyExc_ValueError, "block: %zd bytes for blocks of %lld", block.len,
                            (long long)s.bs);
    }
    io.depth = 1;
    io.split = 2; /* never reached: a batch is one request (loop.IoPath) */
    io.block = block.buf;
    io.size = (size_t)s.bs;
    io.submit_reap = psync_submit_reap;
    io.submit = never_submit;
    PyObject *r = finish(&s, &io, &b);
    PyBuffer_Release(&block);
    return r;
}

PyDoc_STRVAR(run_uring_doc,
"run_uring(share, ring) -> requests left in flight\n\n"
"loop.run over uring.UringPath's ring: ring = (fd, depth, split, sqes, sq, cq, sq_tail,\n"
"sq_array, sq_mask, cq_head, cq_tail, cq_mask, cqes): the views and their byte offsets.");

static PyObject *run_uring(PyObject *self, PyObject *args) {
    PyObject *share;
    Py_buffer sqes, sq, cq;
    long long sq_tail, sq_array, cq_head, cq_tail, cqes;
    unsigned int sq_mask, cq_mask;
    Share s;
    Buffers b;
    Path io;
    memset(&io, 0, sizeof io);
    if (!PyArg_ParseTuple(args, "O(iiiw*w*w*LLILLIL):run_uring", &share, &io.ring_fd, &io.depth,
                          &io.split, &sqes, &sq, &cq, &sq_tail, &sq_array, &sq_mask, &cq_head,
                          &cq_tail, &cq_mask, &cqes))
        return NULL;
    PyObject *r = NULL;
    if (io.depth < 1 || io.split < 1 || sqes.len < io.depth * 64
        || sq_tail + 4 > sq.len || sq_array + 4LL * (sq_mask + 1) > sq.len
        || cq_head + 4 > cq.len || cq_tail + 4 > cq.len
        || cqes + 16LL * (cq_mask + 1) > cq.len || cq_mask + 1 < 2u * (unsigned)io.depth) {
        PyErr_SetString(PyExc_ValueError, "ring: its views are smaller than its offsets");
    } else if (parse_share(share, &s, &b) == 0) {
        io.sqes = sqes.buf;
        io.sq_tail = (volatile uint32_t *)((char *)sq.buf + sq_tail);
        io.sq_array = (volatile uint32_t *)((char *)sq.buf + sq_array);
        io.cq_head = (volatile uint32_t *)((char *)cq.buf + cq_head);
        io.cq_tail = (volatile uint32_t *)((char *)cq.buf + cq_tail);
        io.cqes = (const char *)cq.buf + cqes;
        io.sq_mask = sq_mask;
        io.cq_mask = cq_mask;
        io.tail = *io.sq_tail;
        io.head = *io.cq_head;
        io.timeout.nsec = WAIT_NS;
        io.arg.ts = (uint64_t)(uintptr_t)&io.timeout;
        io.submit_reap = ring_submit_reap;
        io.submit = ring_submit;
        r = finish(&s, &io, &b);
    }
    PyBuffer_Release(&sqes);
    PyBuffer_Release(&sq);
    PyBuffer_Release(&cq);
    return r;
}

static PyMethodDef methods[] = {
    {"run_psync", run_psync, METH_VARARGS, run_psync_doc},
    {"run_uring", run_uring, METH_VARARGS, run_uring_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native",
    "The engine's accounting loop in C (engine/native.py uses it; engine/loop.py is the "
    "reference).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    if (PyModule_AddIntConstant(m, "FIELDS", FIELDS) || PyModule_AddIntConstant(m, "ENDED", ENDED)
        || PyModule_AddIntConstant(m, "SHORT", SHORT) || PyModule_AddIntConstant(m, "SAMPLES", SAMPLES)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
