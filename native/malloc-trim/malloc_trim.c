// glibc's malloc_trim(0) for the gateway's idle collection (src/lib/idle-gc.ts), which Node does not expose.
//
// Under load glibc's main arena grows (V8's compilers, undici's parser, sockets) and, once that memory is freed, keeps it:
// free() hands pages back only from the top of the arena, and what was freed below memory still in use stays in the
// process. malloc_trim walks the arena and releases the whole free pages in it (madvise), wherever they are. On another C
// library (musl) the addon exports nothing and the collection runs without it.
#include <node_api.h>
#if defined(__GLIBC__)
#include <malloc.h>

// trim(): true when memory was handed back to the system.
static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value released;
  napi_get_boolean(env, malloc_trim(0) != 0, &released);
  return released;
}
#endif

NAPI_MODULE_INIT() {
#if defined(__GLIBC__)
  napi_value trim;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, Trim, NULL, &trim) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "trim", trim) != napi_ok) return NULL;
#endif
  return exports;
}
