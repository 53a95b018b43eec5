#include "kernels.hpp"

#include <mpi.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "alltoallv_exchange.hpp"
#include "rma_window.hpp"
#include "troupe/pgas.hpp"

namespace bale {

namespace pgas = troupe::pgas;

namespace {

// The updates of one PE, from (seed, pe): any PE can recompute any other's.
std::vector<std::int64_t> random_indices(int pe, int npes, std::int64_t count,
                                         std::int64_t table_per_pe, std::uint64_t seed) {
  std::mt19937_64 random{seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(pe)};
  std::uniform_int_distribution<std::int64_t> pick{0, table_per_pe * npes - 1};
  std::vector<std::int64_t> indices(static_cast<std::size_t>(count));
  for (auto& index : indices) index = pick(random);
  return indices;
}

}  // namespace

std::string name(form which) {
  switch (which) {
    case form::selector:
      return "selector";
    case form::lambda:
      return "lambda";
    case form::rma:
      return "rma";
    case form::alltoallv:
      return "alltoallv";
  }
  return "?";
}

form form_named(const std::string& text) {
  for (form each : all_forms)
    if (name(each) == text) return each;
  throw std::invalid_argument("unknown form '" + text +
                              "'; expected selector, lambda, rma or alltoallv");
}

std::vector<std::int64_t> histogram_updates(const pgas::world& world, std::int64_t updates,
                                            std::int64_t table_per_pe, std::uint64_t seed) {
  return random_indices(world.pe(), world.npes(), updates, table_per_pe, seed);
}

void histogram(pgas::world& world, form how, std::span<const std::int64_t> updates,
               std::vector<std::int64_t>& table, std::int64_t sign) {
  const std::int64_t npes = world.npes();
  switch (how) {
    case form::selector: {
      pgas::actor<std::int64_t> actor{world, [&table, sign](std::int64_t slot, int) {
                                        table[static_cast<std::size_t>(slot)] += sign;
                                      }};
      for (std::int64_t g : updates) actor.send(static_cast<int>(g % npes), g / npes);
      actor.done();
      actor.wait();
      break;
    }
    case form::lambda: {
      struct state {
        std::vector<std::int64_t>* table;
        std::int64_t sign;
      } here{&table, sign};
      pgas::lambda_actor<state> actor{world, here};
      for (std::int64_t g : updates) {
        const std::int64_t slot = g / npes;
        actor.send(static_cast<int>(g % npes),
                   [slot](state& s) { (*s.table)[static_cast<std::size_t>(slot)] += s.sign; });
      }
      actor.done();
      actor.wait();
      break;
    }
    case form::rma: {
      rma_window window{std::span<const std::int64_t>{table}};
      MPI_Barrier(MPI_COMM_WORLD);  // every window holds its table before any update
      for (std::int64_t g : updates)
        MPI_Accumulate(&sign, 1, MPI_INT64_T, static_cast<int>(g % npes), g / npes, 1, MPI_INT64_T,
                       MPI_SUM, window.get());
      MPI_Win_flush_all(window.get());
      MPI_Barrier(MPI_COMM_WORLD);  // every PE's updates are complete everywhere
      MPI_Win_sync(window.get());
      std::copy(window.data(), window.data() + table.size(), table.begin());
      break;
    }
    case form::alltoallv: {
      alltoallv_exchange<std::int64_t> slots;
      for_each_superstep(updates.size(), [&](std::size_t begin, std::size_t end) {
        slots.bucket(
            end - begin, [&](std::size_t i) { return static_cast<int>(updates[begin + i] % npes); },
            [&](std::size_t i) { return updates[begin + i] / npes; });
        for (std::int64_t slot : slots.exchange()) table[static_cast<std::size_t>(slot)] += sign;
      });
      break;
    }
  }
}

std::string check_histogram(pgas::world& world, form how, std::span<const std::int64_t> updates,
                            std::int64_t table_per_pe) {
  std::vector<std::int64_t> table(static_cast<std::size_t>(table_per_pe), 0);
  histogram(world, how, updates, table, +1);
  std::int64_t here = 0;
  for (auto count : table) here += count;
  const auto total = world.all_reduce(here);
  const auto expected = world.all_reduce(static_cast<std::int64_t>(updates.size()));
  histogram(world, how, updates, table, -1);
  std::int64_t nonzero = 0;
  for (auto count : table) nonzero += count != 0;
  nonzero = world.all_reduce(nonzero);
  if (total != expected)
    return "the tables hold " + std::to_string(total) + " updates, not " + std::to_string(expected);
  if (nonzero != 0)
    return std::to_string(nonzero) + " slots are not zero after subtracting the updates back";
  return {};
}

std::vector<std::int64_t> gather_table(const pgas::world& world, std::int64_t table_per_pe) {
  std::vector<std::int64_t> table(static_cast<std::size_t>(table_per_pe));
  for (std::int64_t l = 0; l < table_per_pe; ++l)
    table[static_cast<std::size_t>(l)] = table_value(l * world.npes() + world.pe());
  return table;
}

std::vector<std::int64_t> gather_reads(const pgas::world& world, std::int64_t reads,
                                       std::int64_t table_per_pe, std::uint64_t seed) {
  return random_indices(world.pe(), world.npes(), reads, table_per_pe, seed + 1);
}

void index_gather(pgas::world& world, form how, std::span<const std::int64_t> reads,
                  const std::vector<std::int64_t>& table, std::vector<std::int64_t>& target) {
  const std::int64_t npes = world.npes();
  target.assign(reads.size(), -1);
  switch (how) {
    case form::selector: {
      struct packet {
        std::int64_t index;  // request: the local index there; reply: where it goes here
        std::int64_t slot;   // request: where the reply goes; reply: the value
      };
      pgas::selector<2, packet>* self = nullptr;
      pgas::selector<2, packet> gather{
          world,
          {[&](const packet& request, int from) {
             self->send(1, from,
                        packet{request.slot, table[static_cast<std::size_t>(request.index)]});
           },
           [&](const packet& reply, int) {
             target[static_cast<std::size_t>(reply.index)] = reply.slot;
           }}};
      self = &gather;
      for (std::size_t i = 0; i < reads.size(); ++i)
        gather.send(0, static_cast<int>(reads[i] % npes),
                    packet{reads[i] / npes, static_cast<std::int64_t>(i)});
      gather.done(0);
      gather.wait();
      break;
    }
    case form::lambda: {
      struct state {
        const std::vector<std::int64_t>* table;
        std::vector<std::int64_t>* target;
      } here{&table, &target};
      using actor_type = pgas::lambda_actor<state>;
      actor_type actor{world, here};
      for (std::size_t i = 0; i < reads.size(); ++i) {
        const std::int64_t local = reads[i] / npes;
        actor.send(static_cast<int>(reads[i] % npes),
                   [local, i](state& s, actor_type::context& at) {
                     const std::int64_t value = (*s.table)[static_cast<std::size_t>(local)];
                     at.send(at.from(), [i, value](state& back) { (*back.target)[i] = value; });
                   });
      }
      actor.done();
      actor.wait();
      break;
    }
    case form::rma: {
      rma_window window{std::span<const std::int64_t>{table}};
      MPI_Barrier(MPI_COMM_WORLD);
      for (std::size_t i = 0; i < reads.size(); ++i) {
        const int pe = static_cast<int>(reads[i] % npes);
        MPI_Get(&target[i], 1, MPI_INT64_T, pe, reads[i] / npes, 1, MPI_INT64_T, window.get());
        MPI_Win_flush(pe, window.get());  // a blocking get, as shmem_g is
      }
      MPI_Barrier(MPI_COMM_WORLD);
      break;
    }
    case form::alltoallv: {
      // Each superstep: the indices to their owners, the values back.
      alltoallv_exchange<std::int64_t> asked;
      std::vector<std::int64_t> values;
      for_each_superstep(reads.size(), [&](std::size_t begin, std::size_t end) {
        asked.bucket(
            end - begin, [&](std::size_t i) { return static_cast<int>(reads[begin + i] % npes); },
            [&](std::size_t i) { return reads[begin + i] / npes; });
        const auto slots = asked.exchange();
        values.resize(slots.size());
        for (std::size_t k = 0; k < slots.size(); ++k)
          values[k] = table[static_cast<std::size_t>(slots[k])];
        const auto answers = asked.reply(std::span<const std::int64_t>{values});
        std::copy(answers.begin(), answers.end(),
                  target.begin() + static_cast<std::ptrdiff_t>(begin));
      });
      break;
    }
  }
}

std::string check_gather(std::span<const std::int64_t> reads,
                         std::span<const std::int64_t> target) {
  for (std::size_t i = 0; i < reads.size(); ++i)
    if (target[i] != table_value(reads[i]))
      return "target[" + std::to_string(i) + "] is " + std::to_string(target[i]) +
             ", but the table holds " + std::to_string(table_value(reads[i])) + " at index " +
             std::to_string(reads[i]);
  return {};
}

std::vector<std::int64_t> histogram_reference(int npes, std::int64_t updates,
                                              std::int64_t table_per_pe, std::uint64_t seed) {
  std::vector<std::int64_t> whole(static_cast<std::size_t>(table_per_pe * npes), 0);
  for (int pe = 0; pe < npes; ++pe)
    for (std::int64_t g : random_indices(pe, npes, updates, table_per_pe, seed))
      ++whole[static_cast<std::size_t>(g)];
  return whole;
}

}  // namespace bale
