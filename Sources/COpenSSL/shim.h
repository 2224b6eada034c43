#ifndef SEATLEDGER_COPENSSL_SHIM_H
#define SEATLEDGER_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/pem.h>
#include <openssl/err.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/sha.h>
#include <openssl/objects.h>
#include <openssl/asn1.h>
#include <openssl/bio.h>

/* Reads a PEM private key and never asks for a passphrase: with no callback OpenSSL prompts on
   the terminal (or reads stdin), which would hang a cron job; an encrypted key just fails. */
static inline int seatledger_refuse_passphrase(char *buf, int size, int rwflag, void *u) {
    (void)buf; (void)size; (void)rwflag; (void)u;
    return -1;
}
static inline EVP_PKEY *seatledger_PEM_read_bio_PrivateKey_no_prompt(BIO *bio) {
    return PEM_read_bio_PrivateKey(bio, NULL, seatledger_refuse_passphrase, NULL);
}

/* Macros and stack-typed helpers Swift cannot import directly. */
static inline int seatledger_sk_X509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
static inline STACK_OF(X509) *seatledger_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline void seatledger_sk_X509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }
static inline long seatledger_BIO_get_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
static inline int seatledger_sk_X509_num(const STACK_OF(X509) *sk) { return sk_X509_num(sk); }
static inline X509 *seatledger_sk_X509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }
/* RFC 2253 escaping and separators but in certificate (DER) order, like `openssl x509 -subject`:
   Apple's names render "CN=…,OU=…,O=…,C=US". The flag macros are expressions Swift cannot import. */
static inline unsigned long seatledger_XN_FLAG_ONELINE_DER_ORDER(void) { return XN_FLAG_RFC2253 & ~XN_FLAG_DN_REV; }
/* EC_GROUP_precompute_mult is deprecated in OpenSSL 3.0 (Debian's libssl3 keeps it, as does
   any build not configured `no-deprecated`, and EC_POINT_mul still uses the table it builds);
   the warning is silenced here, in one place. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
static inline int seatledger_EC_GROUP_precompute_mult(EC_GROUP *group, BN_CTX *ctx) { return EC_GROUP_precompute_mult(group, ctx); }
static inline int seatledger_EC_GROUP_have_precompute_mult(const EC_GROUP *group) { return EC_GROUP_have_precompute_mult(group); }
#pragma clang diagnostic pop
#endif
