// What one side of the remote protocol brings to TLS: the server's certificate and key, or
// what a client trusts (a CA, a pinned certificate).
#pragma once

#include <openssl/ssl.h>

#include <array>
#include <memory>
#include <optional>
#include <string>

namespace troupe::remote {

/// The SHA-256 of a certificate's DER encoding.
using certificate_digest = std::array<unsigned char, 32>;

/// Parses "sha256:" and 64 hex digits; throws std::invalid_argument saying what it found.
certificate_digest parse_certificate_pin(const std::string& text);

/// Writes a digest as "sha256:" and 64 lowercase hex digits.
std::string to_string(const certificate_digest& digest);

/// An OpenSSL context for one role (TLS 1.2 at least, 1.3 preferred). Shared by every
/// connection of that role; immutable once made, so used from any thread.
class tls_context {
 public:
  // -- constructors -------------------------------------------------------------------------

  /// A server's: its certificate chain and private key, PEM files. Throws std::runtime_error
  /// naming the file that cannot be read, holds no PEM of its kind, or does not match.
  static std::shared_ptr<const tls_context> server(const std::string& certificate_file,
                                                   const std::string& key_file);
  /// A client's: verifies the chain against `ca_file` (PEM; empty: no chain check) and the
  /// host name against the certificate, and/or compares the certificate with `pin`. At least
  /// one of them. Throws std::runtime_error naming a CA file that cannot be read.
  static std::shared_ptr<const tls_context> client(const std::string& ca_file,
                                                   std::optional<certificate_digest> pin);

  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;
  ~tls_context();

  // -- properties ---------------------------------------------------------------------------

  /// The OpenSSL context connections are made from.
  [[nodiscard]] SSL_CTX* native() const { return context_; }
  /// True for a server's context.
  [[nodiscard]] bool serving() const { return serving_; }
  /// True when a client verifies the chain and the host name (tls-ca).
  [[nodiscard]] bool verifies_chain() const { return verifies_chain_; }
  /// The certificate a client accepts, if pinned (tls-pin).
  [[nodiscard]] const std::optional<certificate_digest>& pin() const { return pin_; }

 private:
  tls_context(SSL_CTX* context, bool serving);

  SSL_CTX* context_;
  bool serving_;
  bool verifies_chain_ = false;
  std::optional<certificate_digest> pin_;
};

/// OpenSSL's reason for the last failure on this thread ("certificate verify failed"), or
/// `otherwise` when it gave none; clears the thread's error queue.
std::string openssl_reason(const std::string& otherwise);

}  // namespace troupe::remote
