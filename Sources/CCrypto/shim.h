// OpenSSL's libcrypto: SHA-256 (the hash chain, the Merkle tree, photo
// hashes), Ed25519 (signed checkpoints), the random bytes of a new key and
// base64 decoding. Its declarations only: libcrypto is not linked but opened
// with dlopen at the first call (LedgerCore's `LibCrypto`), so a command that
// hashes nothing (`jqc --version`, help, completion) does not pay for loading
// it and binding its thousands of symbols at every start.
// SHA256_Init, _Update and _Final are deprecated in OpenSSL 3.0 (still in
// every libcrypto.so.3 built with its deprecated interfaces, as Debian's is):
// declared here without the warning, and looked up as optional (LibCrypto).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/obj_mac.h>

// The type of each function LedgerCore calls, taken from its declaration
// above, so the pointers found with dlsym are called exactly as the header
// declares them (no hand-written signature to drift from it).
typedef __typeof__(EVP_MD_fetch) *ccrypto_EVP_MD_fetch;
typedef __typeof__(EVP_MD_CTX_new) *ccrypto_EVP_MD_CTX_new;
typedef __typeof__(EVP_MD_CTX_free) *ccrypto_EVP_MD_CTX_free;
typedef __typeof__(EVP_DigestInit_ex2) *ccrypto_EVP_DigestInit_ex2;
typedef __typeof__(EVP_DigestUpdate) *ccrypto_EVP_DigestUpdate;
typedef __typeof__(EVP_DigestFinal_ex) *ccrypto_EVP_DigestFinal_ex;
typedef __typeof__(EVP_DecodeBlock) *ccrypto_EVP_DecodeBlock;
typedef __typeof__(SHA256_Init) *ccrypto_SHA256_Init;
typedef __typeof__(SHA256_Update) *ccrypto_SHA256_Update;
typedef __typeof__(SHA256_Final) *ccrypto_SHA256_Final;
typedef __typeof__(RAND_bytes) *ccrypto_RAND_bytes;
typedef __typeof__(EVP_PKEY_free) *ccrypto_EVP_PKEY_free;
typedef __typeof__(EVP_PKEY_new_raw_private_key) *ccrypto_EVP_PKEY_new_raw_private_key;
typedef __typeof__(EVP_PKEY_new_raw_public_key) *ccrypto_EVP_PKEY_new_raw_public_key;
typedef __typeof__(EVP_PKEY_get_raw_public_key) *ccrypto_EVP_PKEY_get_raw_public_key;
typedef __typeof__(EVP_DigestSignInit) *ccrypto_EVP_DigestSignInit;
typedef __typeof__(EVP_DigestSign) *ccrypto_EVP_DigestSign;
typedef __typeof__(EVP_DigestVerifyInit) *ccrypto_EVP_DigestVerifyInit;
typedef __typeof__(EVP_DigestVerify) *ccrypto_EVP_DigestVerify;

/// The library opened: libcrypto's soname, as the Debian package libssl3
/// (a dependency of jqc's package) installs it.
#define CCRYPTO_LIBRARY "libcrypto.so.3"
