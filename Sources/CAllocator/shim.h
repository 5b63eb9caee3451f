// glibc's allocator tuning (mallopt), which Swift's Glibc module leaves out.
// Nothing else belongs in this target: LedgerStore's HeapGrowth calls it.
#include <malloc.h>
