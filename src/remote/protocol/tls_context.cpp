#include "remote/protocol/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509err.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace troupe::remote {

namespace {

// A file the process can open, or an error that says which and why (OpenSSL's own message
// for a missing file is "system lib").
void check_readable(const std::string& path, const std::string& what) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    throw std::runtime_error("cannot read the " + what + " " + path + ": " + std::strerror(errno));
  }
  std::fclose(file);
}

SSL_CTX* new_context(const SSL_METHOD* method) {
  SSL_CTX* context = SSL_CTX_new(method);
  if (context == nullptr) {
    throw std::runtime_error("cannot make a TLS context: " + openssl_reason("out of memory"));
  }
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  // Bulk transfers: larger reads from the socket, several records at a time; writes of one
  // record each may return early (the caller loops) and be retried from a moved buffer.
  // 64 KiB, not more: OpenSSL moves what is left in the buffer to its front as it goes, and
  // with 256 KiB one TLS stream on an H100 host moved 0.9-1.4 GB/s against 1.3-1.5 (alone)
  // and bench-remote's striped reads 2.9-3.6 GB/s against 4.0 (bench/history, issue 36).
  SSL_CTX_set_read_ahead(context, 1);
  SSL_CTX_set_default_read_buffer_len(context, 64 * 1024);
  // AES-128-GCM first: as safe for this use, and the fastest where AES has instructions.
  SSL_CTX_set_ciphersuites(context,
                           "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                           "TLS_CHACHA20_POLY1305_SHA256");
  SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return context;
}

}  // namespace

std::string openssl_reason(const std::string& otherwise) {
  unsigned long code = ERR_get_error();
  std::string reason;
  for (; code != 0; code = ERR_get_error()) {
    const char* text = ERR_reason_error_string(code);
    if (!reason.empty()) reason += "; ";
    reason += text != nullptr ? text : "OpenSSL error " + std::to_string(code);
  }
  return reason.empty() ? otherwise : reason;
}

certificate_digest parse_certificate_pin(const std::string& text) {
  const std::string prefix = "sha256:";
  certificate_digest digest{};
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  bool valid = text.rfind(prefix, 0) == 0 && text.size() == prefix.size() + 2 * digest.size();
  for (std::size_t i = 0; valid && i < digest.size(); ++i) {
    int high = hex(text[prefix.size() + 2 * i]);
    int low = hex(text[prefix.size() + 2 * i + 1]);
    valid = high >= 0 && low >= 0;
    digest[i] = static_cast<unsigned char>(high * 16 + low);
  }
  if (!valid) {
    throw std::invalid_argument(
        "expected a pin of sha256: and 64 hex digits (the SHA-256 of the "
        "server certificate's DER), found '" +
        text + "'");
  }
  return digest;
}

std::string to_string(const certificate_digest& digest) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string text = "sha256:";
  for (unsigned char byte : digest) {
    text += digits[byte >> 4];
    text += digits[byte & 15];
  }
  return text;
}

tls_context::tls_context(SSL_CTX* context, bool serving) : context_(context), serving_(serving) {}

tls_context::~tls_context() {
  SSL_CTX_free(context_);
}

std::shared_ptr<const tls_context> tls_context::server(const std::string& certificate_file,
                                                       const std::string& key_file) {
  check_readable(certificate_file, "TLS certificate file");
  check_readable(key_file, "TLS key file");
  std::shared_ptr<tls_context> made(new tls_context(new_context(TLS_server_method()), true));
  SSL_CTX* context = made->context_;
  // No session tickets: clients do not resume, and a ticket arriving after the handshake
  // would be bytes on the socket that carry no frame.
  SSL_CTX_set_num_tickets(context, 0);
  if (SSL_CTX_use_certificate_chain_file(context, certificate_file.c_str()) != 1) {
    throw std::runtime_error("the TLS certificate file " + certificate_file +
                             " holds no usable PEM certificate (" +
                             openssl_reason("unknown reason") + ")");
  }
  if (SSL_CTX_use_PrivateKey_file(context, key_file.c_str(), SSL_FILETYPE_PEM) != 1 &&
      ERR_GET_REASON(ERR_peek_last_error()) != X509_R_KEY_VALUES_MISMATCH) {
    throw std::runtime_error("the TLS key file " + key_file + " holds no usable PEM private key (" +
                             openssl_reason("unknown reason") + ")");
  }
  if (ERR_peek_last_error() != 0 || SSL_CTX_check_private_key(context) != 1) {
    throw std::runtime_error("the TLS key file " + key_file +
                             " does not match the certificate of " + certificate_file + " (" +
                             openssl_reason("unknown reason") + ")");
  }
  return made;
}

std::shared_ptr<const tls_context> tls_context::client(const std::string& ca_file,
                                                       std::optional<certificate_digest> pin) {
  if (ca_file.empty() && !pin) {
    throw std::invalid_argument("a TLS client needs a CA file, a pinned certificate or both");
  }
  if (!ca_file.empty()) check_readable(ca_file, "CA file");
  std::shared_ptr<tls_context> made(new tls_context(new_context(TLS_client_method()), false));
  made->pin_ = pin;
  if (!ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(made->context_, ca_file.c_str(), nullptr) != 1) {
      throw std::runtime_error("the CA file " + ca_file + " holds no usable PEM certificate (" +
                               openssl_reason("unknown reason") + ")");
    }
    SSL_CTX_set_verify(made->context_, SSL_VERIFY_PEER, nullptr);
    made->verifies_chain_ = true;
  }
  return made;
}

}  // namespace troupe::remote
