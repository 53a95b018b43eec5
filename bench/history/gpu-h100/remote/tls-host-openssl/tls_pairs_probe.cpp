// A probe outside the build (bench/history): N pairs of threads send 64 MiB in 8 MiB messages
// over loopback through troupe's stream_socket, plain, TLS (tls_stream) or raw OpenSSL (its
// own socket BIO); prints GB/s of all pairs together, sorted. Built against build/release:
// g++ -std=c++20 -O2 -Isrc -Iinclude tls_pairs_probe.cpp \
//   build/release/src/remote/libtroupe_remote_protocol.a -lssl -lcrypto -lpthread
// Usage: probe CERT_DIR plain|tls|raw PAIRS MIB ROUNDS (CERT_DIR holds cert.pem, key.pem).
// Probe: P sender/receiver pairs over loopback; modes: plain, tls (troupe tls_stream), raw (OpenSSL
// socket BIO)
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include "remote/protocol/socket.hpp"
#include "remote/protocol/tls_context.hpp"
#include "remote/protocol/tls_stream.hpp"
using namespace troupe::remote;
static size_t msg = 8 << 20;
struct pair_t {
  stream_socket a, b;  // a receives
  SSL* ra = nullptr;
  SSL* rb = nullptr;
};
int main(int argc, char** argv) {
  std::string dir = argv[1];
  std::string mode = argv[2];
  int pairs = std::atoi(argv[3]);
  size_t total = size_t(std::atol(argv[4])) << 20;
  int rounds = std::atoi(argv[5]);
  auto server = tls_context::server(dir + "/cert.pem", dir + "/key.pem");
  auto client = tls_context::client(dir + "/cert.pem", std::nullopt);
  listen_socket listener("127.0.0.1", 0);
  std::vector<pair_t> ps(pairs);
  for (auto& p : ps) {
    std::thread t([&] { p.a = listener.accept(); });
    p.b = stream_socket::connect("127.0.0.1", listener.port(), 5000);
    t.join();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    if (mode == "tls") {
      std::unique_ptr<tls_stream> sa;
      std::thread h([&] { sa = tls_stream::accept(p.a.fd(), *server, deadline); });
      auto sb = tls_stream::connect(p.b.fd(), *client, "127.0.0.1", deadline);
      h.join();
      p.a.secure(std::move(sa));
      p.b.secure(std::move(sb));
    } else if (mode == "raw") {
      p.ra = SSL_new(server->native());
      p.rb = SSL_new(client->native());
      SSL_set_fd(p.ra, p.a.fd());
      SSL_set_fd(p.rb, p.b.fd());
      std::thread h([&] {
        if (SSL_accept(p.ra) != 1) std::abort();
      });
      if (SSL_connect(p.rb) != 1) std::abort();
      h.join();
    }
  }
  std::vector<double> rates;
  for (int r = 0; r < rounds; ++r) {
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> ts;
    for (auto& p : ps) {
      ts.emplace_back([&p, total, &mode] {
        std::vector<std::byte> src(msg, std::byte{7});
        for (size_t done = 0; done < total; done += msg) {
          if (mode == "raw") {
            size_t at = 0;
            while (at < msg) {
              int n = SSL_write(p.rb, src.data() + at, int(msg - at));
              if (n <= 0) std::abort();
              at += n;
            }
          } else {
            p.b.send_encoded(src);
          }
        }
      });
      ts.emplace_back([&p, total, &mode] {
        std::vector<std::byte> dst(msg);
        for (size_t done = 0; done < total; done += msg) {
          if (mode == "raw") {
            size_t at = 0;
            while (at < msg) {
              int n = SSL_read(p.ra, dst.data() + at, int(msg - at));
              if (n <= 0) std::abort();
              at += n;
            }
          } else {
            p.a.receive_exact(dst.data(), msg);
          }
        }
      });
    }
    for (auto& t : ts) t.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rates.push_back(double(total) * pairs / s / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  std::printf("%s pairs=%d GB/s:", mode.c_str(), pairs);
  for (double x : rates) std::printf(" %.2f", x);
  std::printf("\n");
}
