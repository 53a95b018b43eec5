#pragma once

// Certificates for the TLS tests, made at test time by the openssl command into a scratch
// directory: nothing secret is ever committed.
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "temp_directory.hpp"

namespace troupe::remote_test {

/// A CA and certificates of three kinds: signed by the CA for 127.0.0.1 and localhost, signed by
/// it for another name only, and self-signed; plus a second CA that signed none of them.
class test_certificates {
 public:
  test_certificates() {
    make_authority("ca");
    make_authority("other-ca");
    make_signed("server", "IP:127.0.0.1,DNS:localhost");
    make_signed("elsewhere", "DNS:gpu1.invalid");
    run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "
        "/CN=troupe-self-signed -keyout " +
        path("self.key") + " -out " + path("self.pem"));
  }

  /// The path of a file made here ("ca.pem", "server.pem", "server.key", ...).
  [[nodiscard]] std::string path(const std::string& name) const {
    return (directory_.path() / name).string();
  }

  /// "sha256:" and the hex SHA-256 of the DER of certificate `name` ("self.pem").
  [[nodiscard]] std::string pin(const std::string& name) const {
    std::FILE* file = std::fopen(path(name).c_str(), "r");
    if (file == nullptr) throw std::runtime_error("cannot read " + path(name));
    X509* certificate = PEM_read_X509(file, nullptr, nullptr, nullptr);
    std::fclose(file);
    if (certificate == nullptr) throw std::runtime_error(path(name) + " holds no certificate");
    unsigned char digest[32];
    unsigned length = 0;
    X509_digest(certificate, EVP_sha256(), digest, &length);
    X509_free(certificate);
    std::string text = "sha256:";
    char hex[3];
    for (unsigned i = 0; i < length; ++i) {
      std::snprintf(hex, sizeof hex, "%02x", digest[i]);
      text += hex;
    }
    return text;
  }

 private:
  void run(const std::string& command) const {
    const std::string quiet = command + " >" + path("openssl.log") + " 2>&1";
    if (std::system(quiet.c_str()) != 0) {
      std::ifstream log(path("openssl.log"));
      std::string output((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      throw std::runtime_error("'" + command + "' failed: " + output);
    }
  }
  void make_authority(const std::string& name) const {
    run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "
        "/CN=troupe-test-" +
        name + " -keyout " + path(name + ".key") + " -out " + path(name + ".pem"));
  }
  void make_signed(const std::string& name, const std::string& names) const {
    std::ofstream(path(name + ".ext")) << "subjectAltName=" << names << "\n";
    run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=troupe-test-" +
        name + " -keyout " + path(name + ".key") + " -out " + path(name + ".csr"));
    run("openssl x509 -req -days 2 -in " + path(name + ".csr") + " -CA " + path("ca.pem") +
        " -CAkey " + path("ca.key") + " -CAcreateserial -extfile " + path(name + ".ext") +
        " -out " + path(name + ".pem"));
  }

  temp_directory directory_;
};

}  // namespace troupe::remote_test
