// The LMDB C API, exactly as Debian's liblmdb-dev ships it, and one hint
// Swift cannot spell: a prefetch of bytes lent from the map. Nothing else
// belongs in this target: the safe Swift layer lives in the LMDB target.
#include <lmdb.h>

static inline void lmdb_shim_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }
