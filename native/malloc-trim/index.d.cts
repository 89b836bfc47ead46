/** glibc's `malloc_trim(0)`: true when memory went back to the system. Undefined where the addon is not built or the C library has none. */
export declare const trimMalloc: (() => boolean) | undefined;
