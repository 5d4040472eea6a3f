/*
 * Keeps the process's resident set small (src/engine/store/resident-pages.ts).
 *
 * LMDB reads and writes through a shared memory map of its data file. Every page a batch or a
 * search touches stays mapped, and so counted in the process's RSS, until the environment closes, although the
 * kernel's page cache holds the same page. MADV_DONTNEED on a shared file mapping only drops the
 * process's page-table entries: a dirty page's data stays in the page cache (the kernel moves the
 * dirty bit to the page first) and the next access maps it again, with the same content.
 *
 * glibc's malloc raises its mmap threshold each time a large block is freed, up to 32 MiB, after
 * which typed arrays and native buffers of a batch come from the heap and fragment it; a fixed
 * threshold keeps large blocks in their own mappings, given back when freed.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <node_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Drops every page of the shared mappings of `path` from the page tables; returns the bytes advised. */
static double release_file(const char *path) {
  double released = 0;
  FILE *maps = fopen("/proc/self/maps", "r");
  if (!maps) return 0;
  char line[4096 + 256];
  while (fgets(line, sizeof line, maps)) {
    unsigned long start, end;
    char perms[8];
    int at = 0;
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &at) < 3 || at == 0) continue;
    /* Private mappings would lose their own changes: only shared ones. */
    if (strlen(perms) < 4 || perms[3] != 's') continue;
    char *name = line + at;
    name[strcspn(name, "\n")] = 0;
    if (strcmp(name, path) != 0) continue;
    if (madvise((void *)start, end - start, MADV_DONTNEED) == 0) released += (double)(end - start);
  }
  fclose(maps);
  return released;
}

/*
 * One background thread for the process. It reads how many file-backed pages the process has
 * mapped (/proc/self/statm, a few microseconds) every millisecond while that grows, backing off
 * to MAX_TICK_MS when it does not, and past the budget releases the pages of every watched file.
 * A search on a large index maps 10-70 MB of its data file within a few milliseconds (each read
 * fault maps a 64 KiB window), so a fixed interval either lets hundreds of megabytes build up or
 * drops pages that were not in the way.
 */
#define MIN_TICK_MS 1
#define MAX_TICK_MS 16
/* Growth between two looks that counts as pages being mapped. */
#define GROWING_BYTES (1024.0 * 1024)

typedef struct watch {
  char path[4096];
  int stopped;
  struct watch *next;
} watch;

static pthread_mutex_t watches_lock = PTHREAD_MUTEX_INITIALIZER;
static watch *watches = NULL;
static int thread_started = 0;
/* Release once this many bytes of file-backed pages are mapped (the program's own included). */
static double mapped_limit = 256.0 * 1024 * 1024;
static double releases = 0;

static double mapped_file_bytes(void) {
  FILE *statm = fopen("/proc/self/statm", "r");
  if (!statm) return 0;
  unsigned long size = 0, resident = 0, shared = 0;
  int read = fscanf(statm, "%lu %lu %lu", &size, &resident, &shared);
  fclose(statm);
  return read == 3 ? (double)shared * (double)sysconf(_SC_PAGESIZE) : 0;
}

static void *watch_loop(void *arg) {
  (void)arg;
  long tick_ms = MAX_TICK_MS;
  double last = 0;
  for (;;) {
    const struct timespec tick = {0, tick_ms * 1000000L};
    nanosleep(&tick, NULL);
    pthread_mutex_lock(&watches_lock);
    int idle = watches == NULL;
    double limit = mapped_limit;
    pthread_mutex_unlock(&watches_lock);
    if (idle) continue;
    double mapped = mapped_file_bytes();
    /* While pages are being mapped, look often; when nothing moves, back off. */
    tick_ms = mapped > last + GROWING_BYTES ? MIN_TICK_MS : (tick_ms * 2 > MAX_TICK_MS ? MAX_TICK_MS : tick_ms * 2);
    last = mapped;
    if (mapped < limit) continue;
    last = 0;
    /* Copy the paths, then release without the lock (a watch may end meanwhile). */
    pthread_mutex_lock(&watches_lock);
    releases++;
    size_t n = 0;
    for (watch *w = watches; w; w = w->next) n++;
    char *paths = n ? malloc(n * 4096) : NULL;
    size_t i = 0;
    if (paths)
      for (watch *w = watches; w; w = w->next) memcpy(paths + 4096 * i++, w->path, 4096);
    pthread_mutex_unlock(&watches_lock);
    for (size_t j = 0; j < i; j++) release_file(paths + 4096 * j);
    free(paths);
  }
  return NULL;
}

static int start_thread(void) {
  if (thread_started) return 1;
  pthread_t thread;
  if (pthread_create(&thread, NULL, watch_loop, NULL) != 0) return 0;
  pthread_detach(thread);
  thread_started = 1;
  return 1;
}

/* Unlinks `w` (called with the lock held); a no-op once stopped. */
static void remove_watch(watch *w) {
  if (w->stopped) return;
  w->stopped = 1;
  for (watch **at = &watches; *at; at = &(*at)->next) {
    if (*at == w) {
      *at = w->next;
      break;
    }
  }
}

static int string_arg(napi_env env, napi_value value, char *out, size_t size) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, value, out, size, &len) != napi_ok || len + 1 >= size) {
    napi_throw_type_error(env, NULL, "expected a file path");
    return 0;
  }
  return 1;
}

static napi_value js_release_file_pages(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char path[4096];
  if (argc < 1 || !string_arg(env, argv[0], path, sizeof path)) return NULL;
  napi_value out;
  napi_create_double(env, release_file(path), &out);
  return out;
}

static void finalize_watch(napi_env env, void *data, void *hint) {
  watch *w = data;
  pthread_mutex_lock(&watches_lock);
  remove_watch(w);
  pthread_mutex_unlock(&watches_lock);
  free(w);
}

/* watchFilePages(path): an external handle; stopWatching(handle) ends the watch. */
static napi_value js_watch_file_pages(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  watch *w = calloc(1, sizeof *w);
  if (!w) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  if (argc < 1 || !string_arg(env, argv[0], w->path, sizeof w->path)) {
    free(w);
    return NULL;
  }
  pthread_mutex_lock(&watches_lock);
  if (!start_thread()) {
    pthread_mutex_unlock(&watches_lock);
    free(w);
    napi_throw_error(env, NULL, "could not start the page release thread");
    return NULL;
  }
  w->next = watches;
  watches = w;
  pthread_mutex_unlock(&watches_lock);
  napi_value handle;
  napi_create_external(env, w, finalize_watch, NULL, &handle);
  return handle;
}

static napi_value js_stop_watching(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  void *data = NULL;
  if (argc < 1 || napi_get_value_external(env, argv[0], &data) != napi_ok || !data) {
    napi_throw_type_error(env, NULL, "expected a handle from watchFilePages");
    return NULL;
  }
  pthread_mutex_lock(&watches_lock);
  remove_watch(data);
  pthread_mutex_unlock(&watches_lock);
  return NULL;
}

/* The first argument as a number; false, with a TypeError thrown, when there is none. */
static int number_arg(napi_env env, napi_callback_info info, double *out) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1 || napi_get_value_double(env, argv[0], out) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a size in bytes");
    return 0;
  }
  return 1;
}

/* setMappedLimit(bytes): the file-backed mapped bytes past which watched files are released. */
static napi_value js_set_mapped_limit(napi_env env, napi_callback_info info) {
  double bytes = 0;
  if (!number_arg(env, info, &bytes)) return NULL;
  pthread_mutex_lock(&watches_lock);
  if (bytes > 0) mapped_limit = bytes;
  pthread_mutex_unlock(&watches_lock);
  return NULL;
}

/* releaseCount(): how many times the watched files were released so far. */
static napi_value js_release_count(napi_env env, napi_callback_info info) {
  pthread_mutex_lock(&watches_lock);
  double count = releases;
  pthread_mutex_unlock(&watches_lock);
  napi_value out;
  napi_create_double(env, count, &out);
  return out;
}

/* mappedFileBytes(): file-backed bytes mapped by the process now. */
static napi_value js_mapped_file_bytes(napi_env env, napi_callback_info info) {
  napi_value out;
  napi_create_double(env, mapped_file_bytes(), &out);
  return out;
}

static napi_value js_trim_heap(napi_env env, napi_callback_info info) {
  napi_value out;
  napi_get_boolean(env, malloc_trim(0) == 1, &out);
  return out;
}

static napi_value js_set_mmap_threshold(napi_env env, napi_callback_info info) {
  double bytes = 0;
  if (!number_arg(env, info, &bytes)) return NULL;
  napi_value out;
  napi_get_boolean(env, mallopt(M_MMAP_THRESHOLD, (int)bytes) == 1, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor fns[] = {
      {"releaseFilePages", NULL, js_release_file_pages, NULL, NULL, NULL, napi_default, NULL},
      {"watchFilePages", NULL, js_watch_file_pages, NULL, NULL, NULL, napi_default, NULL},
      {"stopWatching", NULL, js_stop_watching, NULL, NULL, NULL, napi_default, NULL},
      {"setMappedLimit", NULL, js_set_mapped_limit, NULL, NULL, NULL, napi_default, NULL},
      {"releaseCount", NULL, js_release_count, NULL, NULL, NULL, napi_default, NULL},
      {"mappedFileBytes", NULL, js_mapped_file_bytes, NULL, NULL, NULL, napi_default, NULL},
      {"trimHeap", NULL, js_trim_heap, NULL, NULL, NULL, napi_default, NULL},
      {"setMmapThreshold", NULL, js_set_mmap_threshold, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof fns / sizeof fns[0], fns);
  return exports;
}
