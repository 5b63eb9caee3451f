// The LMDB C API, exactly as Debian's liblmdb-dev ships it. Nothing else
// belongs in this target: the safe Swift layer lives in the LMDB target.
#include <lmdb.h>
