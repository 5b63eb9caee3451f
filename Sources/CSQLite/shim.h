// SQLite, used only by Tools/bench as the baseline the ledger is measured against.
#include <sqlite3.h>
