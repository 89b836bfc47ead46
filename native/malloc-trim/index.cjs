'use strict';
// glibc's malloc_trim(0) (malloc_trim.c), or undefined where it is not there: the addon was not built (no C compiler or
// Python when npm installed it) or the C library has none. Callers run without it.
let trimMalloc;
try {
  trimMalloc = require('./build/Release/malloc_trim.node').trim;
} catch {
  trimMalloc = undefined;
}
module.exports = { trimMalloc };
