// OpenSSL's libcrypto, used only for SHA-256 (the hash chain, photo hashes).
#include <openssl/sha.h>
#include <openssl/evp.h>
