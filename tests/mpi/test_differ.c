/* Ranks that differ where MPI lets them: every collective gc3 runs, called with a different
 * datatype layout of one type signature on each rank where Open MPI allows derived datatypes (bcast,
 * allgather, alltoall: contiguous, vector, resized, a lower bound past the start, a struct with
 * holes; the reductions take predefined datatypes only), in place at some ranks where MPI allows it
 * (the root of a reduce), and with each rank's buffers in memory of its own kind (--kinds: host, device, managed,
 * pinned, cycled over the ranks; device kinds in a build with CUDA). Every result is checked against
 * a host computation, and every byte outside a datatype's data is checked untouched. A route that
 * differs between the ranks hangs: CTest's timeout fails the test then.
 *
 * usage: test_differ [--kinds K,K,...] [--counts N,N,...] [--reps R]   (under mpirun)
 * prints one line per check and "N passed, M failed". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef GC3_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

enum { K_HOST, K_DEVICE, K_MANAGED, K_PINNED };
static const char *kind_names[] = { "host", "device", "managed", "pinned" };
enum { L_CONTIG, L_VECTOR, L_RESIZED, L_LB, L_STRUCT, L_COUNT, L_INT };
static const char *layout_names[] = { "contiguous", "vector", "resized", "lb>0", "struct" };

#define SENTINEL (-7)

static int rank, size, checks, failures;
static int kinds[16], nkinds = 1;

/* A layout of n ints: its datatype, the count of it, the byte offset of int i, and the buffer's bytes. */
typedef struct {
    int          layout;
    MPI_Datatype dt;
    int          count;
    size_t       bytes;
    int          n;
} lay_t;

static size_t lay_off(const lay_t *l, int i)
{
    switch (l->layout) {
    case L_VECTOR:
        return (size_t)i * 8; /* every second int */
    case L_RESIZED:
        return (size_t)i * 12; /* an int in 12 bytes */
    case L_LB:
        return 8 + (size_t)i * 12; /* the data starts 8 bytes past the buffer */
    case L_STRUCT:
        return (size_t)(i / 2) * 16 + (size_t)(i % 2) * 8; /* two ints 8 apart in 16 bytes */
    default:
        return (size_t)i * 4;
    }
}

/* n ints in blocks of `unit` (a collective's per-rank part): a layout whose element would straddle two
 * blocks (a struct of two ints with an odd unit, a vector of more than one block) is resized instead */
static void lay_make(lay_t *l, int layout, int n, int unit)
{
    MPI_Datatype t;
    if ((layout == L_STRUCT && unit % 2) || (layout == L_VECTOR && unit != n)) {
        layout = L_RESIZED;
    }
    l->layout = layout;
    l->n      = n;
    switch (l->layout) {
    case L_VECTOR:
        MPI_Type_vector(n, 1, 2, MPI_INT, &l->dt);
        l->count = 1;
        break;
    case L_RESIZED:
        MPI_Type_create_resized(MPI_INT, 0, 12, &l->dt);
        l->count = n;
        break;
    case L_LB: {
        int          bl   = 1;
        MPI_Aint     disp = 8;
        MPI_Datatype in   = MPI_INT;
        MPI_Type_create_struct(1, &bl, &disp, &in, &t);
        MPI_Type_create_resized(t, 0, 12, &l->dt);
        MPI_Type_free(&t);
        l->count = n;
        break;
    }
    case L_STRUCT: {
        int          bl[2]   = { 1, 1 };
        MPI_Aint     disp[2] = { 0, 8 };
        MPI_Datatype in[2]   = { MPI_INT, MPI_INT };
        MPI_Type_create_struct(2, bl, disp, in, &t);
        MPI_Type_create_resized(t, 0, 16, &l->dt);
        MPI_Type_free(&t);
        l->count = n / 2;
        break;
    }
    case L_INT:
        l->dt    = MPI_INT; /* predefined: Open MPI takes predefined ops on predefined datatypes only */
        l->count = n;
        break;
    default:
        MPI_Type_contiguous(1, MPI_INT, &l->dt);
        l->count = n;
        break;
    }
    if (l->layout != L_INT)
        MPI_Type_commit(&l->dt);
    l->bytes = n > 0 ? lay_off(l, n - 1) + 16 : 16;
}

static void lay_free(lay_t *l)
{
    if (l->layout != L_INT)
        MPI_Type_free(&l->dt);
}

/* Memory of this rank's kind; its host image for filling and checking. */
static void *mem_alloc(int kind, size_t bytes)
{
    void *p = NULL;
#ifdef GC3_HAVE_CUDA
    if (kind == K_DEVICE && cudaMalloc(&p, bytes) == cudaSuccess)
        return p;
    if (kind == K_MANAGED && cudaMallocManaged(&p, bytes, cudaMemAttachGlobal) == cudaSuccess)
        return p;
    if (kind == K_PINNED && cudaMallocHost(&p, bytes) == cudaSuccess)
        return p;
#endif
    (void)kind;
    return malloc(bytes);
}

static void mem_free(int kind, void *p)
{
#ifdef GC3_HAVE_CUDA
    if (kind == K_DEVICE || kind == K_MANAGED) {
        cudaFree(p);
        return;
    }
    if (kind == K_PINNED) {
        cudaFreeHost(p);
        return;
    }
#endif
    (void)kind;
    free(p);
}

static void mem_put(int kind, void *dst, const void *src, size_t bytes)
{
#ifdef GC3_HAVE_CUDA
    if (kind == K_DEVICE) {
        cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
        return;
    }
#endif
    (void)kind;
    memcpy(dst, src, bytes);
}

static void mem_get(int kind, void *dst, const void *src, size_t bytes)
{
#ifdef GC3_HAVE_CUDA
    if (kind == K_DEVICE) {
        cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost);
        return;
    }
#endif
    (void)kind;
    memcpy(dst, src, bytes);
}

/* A buffer: a layout in memory of a kind, with its host image. */
typedef struct {
    lay_t l;
    int   kind;
    char *mem, *img;
} buf_t;

static void buf_make(buf_t *b, int layout, int n, int unit, int kind)
{
    lay_make(&b->l, layout, n, unit);
    b->kind = kind;
    b->mem  = mem_alloc(kind, b->l.bytes);
    b->img  = malloc(b->l.bytes);
    for (size_t i = 0; i < b->l.bytes / 4; i++) {
        ((int *)b->img)[i] = SENTINEL;
    }
}

static void buf_set(buf_t *b, int i, int v)
{
    memcpy(b->img + lay_off(&b->l, i), &v, 4);
}

static void buf_push(buf_t *b)
{
    mem_put(b->kind, b->mem, b->img, b->l.bytes);
}

/* the buffer's ints against want(i) (NULL: only the holes), and every other byte the sentinel */
static int buf_check(buf_t *b, int (*want)(int i, void *ctx), void *ctx, const char *what)
{
    int   *got = malloc(b->l.bytes), ok = 1;
    char  *data;
    size_t words = b->l.bytes / 4;

    mem_get(b->kind, got, b->mem, b->l.bytes);
    data = calloc(words, 1);
    for (int i = 0; i < b->l.n; i++) {
        size_t w = lay_off(&b->l, i) / 4;
        data[w]  = 1;
        if (want != NULL && got[w] != want(i, ctx) && ok) {
            fprintf(stderr, "rank %d: %s: int %d is %d, want %d\n", rank, what, i, got[w], want(i, ctx));
            ok = 0;
        }
    }
    for (size_t w = 0; w < words; w++) {
        if (!data[w] && got[w] != SENTINEL && ok) {
            fprintf(stderr, "rank %d: %s: byte %zu outside the datatype's data changed (%d)\n", rank, what, 4 * w,
                    got[w]);
            ok = 0;
        }
    }
    free(data);
    free(got);
    return ok;
}

static void buf_free(buf_t *b)
{
    mem_free(b->kind, b->mem);
    free(b->img);
    lay_free(&b->l);
}

static void check(int ok, const char *fmt, const char *coll, int n, int variant)
{
    int all = ok;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    checks++;
    failures += !all;
    if (rank == 0) {
        printf("%s: %s ", all ? "ok" : "FAILED", coll);
        printf(fmt, n, variant);
        printf("\n");
        fflush(stdout);
    }
}

/* each rank's layout and kind for variant v */
static int my_layout(int v, int salt)
{
    return (rank + v + salt) % L_COUNT;
}
static int my_kind(void)
{
    return kinds[rank % nkinds];
}

typedef struct {
    int n, root, block, from;
} ctx_t;

static int v_sum(int i, void *c)
{
    (void)c;
    int s = 0;
    for (int q = 0; q < size; q++)
        s += q * 1000 + i;
    return s;
}
static int v_root(int i, void *c)
{
    return ((ctx_t *)c)->root * 1000 + i;
}
static int v_gather(int i, void *c)
{
    int n = ((ctx_t *)c)->n;
    return (i / n) * 1000 + i % n;
}
static int v_a2a(int i, void *c)
{
    int n = ((ctx_t *)c)->n; /* from rank i/n, its block for this rank */
    return (i / n) * 1000 + rank * 10 + i % n;
}
static int v_rsb(int i, void *c)
{
    int n = ((ctx_t *)c)->n, s = 0;
    for (int q = 0; q < size; q++)
        s += q * 1000 + rank * n + i;
    return s;
}

static MPI_Op user_sum; /* MPI_SUM of ints as a user-defined op: gc3 does not take it */
static void   user_sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void run(int n, int v)
{
    ctx_t c = { n, 0, 0, 0 };
    buf_t s, r;
    int   ok;

    /* the reductions: MPI_INT (Open MPI refuses a predefined op on a derived datatype), each rank its
     * own memory; allreduce out of place */
    buf_make(&s, L_INT, n, n, my_kind());
    buf_make(&r, L_INT, n, n, my_kind());
    for (int i = 0; i < n; i++)
        buf_set(&s, i, rank * 1000 + i);
    buf_push(&s);
    buf_push(&r);
    ok = MPI_Allreduce(s.mem, r.mem, s.l.count, s.l.dt, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS &&
         buf_check(&r, v_sum, &c, "allreduce") && buf_check(&s, NULL, NULL, "allreduce's send buffer");
    check(ok, "count %d variant %d", "MPI_Allreduce", n, v);
    buf_free(&s);
    buf_free(&r);

    /* allreduce in place (at every rank, as MPI wants) */
    buf_make(&r, L_INT, n, n, my_kind());
    for (int i = 0; i < n; i++)
        buf_set(&r, i, rank * 1000 + i);
    buf_push(&r);
    ok = MPI_Allreduce(MPI_IN_PLACE, r.mem, r.l.count, r.l.dt, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS &&
         buf_check(&r, v_sum, &c, "allreduce in place");
    check(ok, "in place, count %d variant %d", "MPI_Allreduce", n, v);
    buf_free(&r);

    /* nonblocking: MPI_Iallreduce with MPI_SUM (gc3's route) and with a user-defined op (not gc3's:
     * every rank gives it to Open MPI's nonblocking collective, device memory on host copies), and
     * MPI_Ibcast with each rank's layout */
    for (int u = 0; u < 2; u++) {
        MPI_Request req;
        buf_make(&s, L_INT, n, n, my_kind());
        buf_make(&r, L_INT, n, n, my_kind());
        for (int i = 0; i < n; i++)
            buf_set(&s, i, rank * 1000 + i);
        buf_push(&s);
        buf_push(&r);
        ok = MPI_Iallreduce(s.mem, r.mem, n, MPI_INT, u ? user_sum : MPI_SUM, MPI_COMM_WORLD, &req) == MPI_SUCCESS &&
             MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS && buf_check(&r, v_sum, &c, "iallreduce");
        check(ok, u ? "user op, count %d variant %d" : "count %d variant %d", "MPI_Iallreduce", n, v);
        buf_free(&s);
        buf_free(&r);
    }
    {
        MPI_Request req;
        c.root = size - 1;
        buf_make(&r, my_layout(v, 4), n, n, my_kind());
        if (rank == c.root)
            for (int i = 0; i < n; i++)
                buf_set(&r, i, c.root * 1000 + i);
        buf_push(&r);
        ok = MPI_Ibcast(r.mem, r.l.count, r.l.dt, c.root, MPI_COMM_WORLD, &req) == MPI_SUCCESS &&
             MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS && buf_check(&r, v_root, &c, "ibcast");
        check(ok, "count %d variant %d", "MPI_Ibcast", n, v);
        buf_free(&r);
    }

    /* bcast: each root in turn */
    for (int root = 0; root < size; root++) {
        c.root = root;
        buf_make(&r, my_layout(v, root), n, n, my_kind());
        if (rank == root)
            for (int i = 0; i < n; i++)
                buf_set(&r, i, root * 1000 + i);
        buf_push(&r);
        ok = MPI_Bcast(r.mem, r.l.count, r.l.dt, root, MPI_COMM_WORLD) == MPI_SUCCESS &&
             buf_check(&r, v_root, &c, "bcast");
        check(ok, "count %d variant %d", "MPI_Bcast", n, v);
        buf_free(&r);
    }

    /* reduce: each root in turn, in place at the root every second time */
    for (int root = 0; root < size; root++) {
        const int inplace = rank == root && (root + v) % 2;
        buf_make(&s, L_INT, n, n, my_kind());
        buf_make(&r, L_INT, n, n, my_kind());
        for (int i = 0; i < n; i++) {
            buf_set(inplace ? &r : &s, i, rank * 1000 + i);
        }
        buf_push(&s);
        buf_push(&r);
        ok = MPI_Reduce(inplace ? MPI_IN_PLACE : s.mem, rank == root ? r.mem : NULL, s.l.count, s.l.dt, MPI_SUM, root,
                        MPI_COMM_WORLD) == MPI_SUCCESS &&
             (rank != root || buf_check(&r, v_sum, &c, "reduce")) &&
             (rank == root || buf_check(&r, NULL, NULL, "reduce's receive buffer at a non-root"));
        check(ok, "count %d variant %d", "MPI_Reduce", n, v);
        buf_free(&s);
        buf_free(&r);
    }

    /* allgather: n ints from each rank into n * size */
    buf_make(&s, my_layout(v, 3), n, n, my_kind());
    buf_make(&r, my_layout(v, 4), n * size, n, my_kind());
    for (int i = 0; i < n; i++)
        buf_set(&s, i, rank * 1000 + i);
    buf_push(&s);
    buf_push(&r);
    ok = MPI_Allgather(s.mem, s.l.count, s.l.dt, r.mem, r.l.count / size, r.l.dt, MPI_COMM_WORLD) == MPI_SUCCESS &&
         buf_check(&r, v_gather, &c, "allgather");
    check(ok, "count %d variant %d", "MPI_Allgather", n, v);
    buf_free(&s);
    buf_free(&r);

    /* alltoall: block q of n ints to rank q */
    buf_make(&s, my_layout(v, 0), n * size, n, my_kind());
    buf_make(&r, my_layout(v, 1), n * size, n, my_kind());
    for (int q = 0; q < size; q++)
        for (int i = 0; i < n; i++)
            buf_set(&s, q * n + i, rank * 1000 + q * 10 + i);
    buf_push(&s);
    buf_push(&r);
    ok =
        MPI_Alltoall(s.mem, s.l.count / size, s.l.dt, r.mem, r.l.count / size, r.l.dt, MPI_COMM_WORLD) == MPI_SUCCESS &&
        buf_check(&r, v_a2a, &c, "alltoall");
    check(ok, "count %d variant %d", "MPI_Alltoall", n, v);
    buf_free(&s);
    buf_free(&r);

    /* reduce_scatter_block: n * size ints in, n out */
    {
        buf_make(&s, L_INT, n * size, n, my_kind());
        buf_make(&r, L_INT, n, n, my_kind());
    }
    for (int i = 0; i < n * size; i++)
        buf_set(&s, i, rank * 1000 + i);
    buf_push(&s);
    buf_push(&r);
    ok = MPI_Reduce_scatter_block(s.mem, r.mem, r.l.count, r.l.dt, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS &&
         buf_check(&r, v_rsb, &c, "reduce_scatter_block");
    check(ok, "count %d variant %d", "MPI_Reduce_scatter_block", n, v);
    buf_free(&s);
    buf_free(&r);
}

int main(int argc, char **argv)
{
    int counts[16] = { 1, 2, 17, 300 }, ncounts = 4, reps = 1;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--kinds") && a + 1 < argc) {
            char *save = NULL;
            nkinds     = 0;
            for (char *t = strtok_r(argv[++a], ",", &save); t != NULL && nkinds < 16; t = strtok_r(NULL, ",", &save)) {
                for (int k = 0; k < 4; k++)
                    if (!strcmp(t, kind_names[k]))
                        kinds[nkinds++] = k;
            }
        } else if (!strcmp(argv[a], "--counts") && a + 1 < argc) {
            char *save = NULL;
            ncounts    = 0;
            for (char *t = strtok_r(argv[++a], ",", &save); t != NULL && ncounts < 16; t = strtok_r(NULL, ",", &save))
                counts[ncounts++] = atoi(t);
        } else if (!strcmp(argv[a], "--reps") && a + 1 < argc) {
            reps = atoi(argv[++a]);
        } else {
            if (rank == 0)
                fprintf(stderr,
                        "usage: test_differ [--kinds host,device,managed,pinned] [--counts N,...] [--reps R]\n");
            MPI_Finalize();
            return 2;
        }
    }
#ifndef GC3_HAVE_CUDA
    for (int k = 0; k < nkinds; k++) {
        if (kinds[k] != K_HOST) {
            if (rank == 0)
                printf("SKIPPED: %s memory needs a build with CUDA\n", kind_names[kinds[k]]);
            MPI_Finalize();
            return 77;
        }
    }
#endif
    if (rank == 0) {
        printf("%d ranks; memory by rank:", size);
        for (int q = 0; q < size; q++)
            printf(" %s", kind_names[kinds[q % nkinds]]);
        printf("; layouts: %s, %s, %s, %s, %s (a different one on each rank)\n", layout_names[0], layout_names[1],
               layout_names[2], layout_names[3], layout_names[4]);
    }
    MPI_Op_create(user_sum_fn, 1, &user_sum);
    for (int r = 0; r < reps; r++)
        for (int c = 0; c < ncounts; c++)
            for (int v = 0; v < L_COUNT; v++)
                run(counts[c], v);
    MPI_Op_free(&user_sum);
    if (rank == 0)
        printf("%d passed, %d failed\n", checks - failures, failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
