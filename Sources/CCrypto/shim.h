// OpenSSL's libcrypto: SHA-256 (the hash chain, the Merkle tree, photo
// hashes), Ed25519 (signed checkpoints) and the random bytes of a new key.
#include <openssl/sha.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/obj_mac.h>
