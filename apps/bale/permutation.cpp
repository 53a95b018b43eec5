// Random permutation by dart throwing (bale's randperm): every item is thrown at a random slot
// of a table twice its size; a slot already taken sends the item back to be thrown again. The
// occupied slots, read in order, are the permutation. The alltoallv form throws in bulk rounds.
#include <random>

#include "alltoallv_exchange.hpp"
#include "kernels.hpp"
#include "rma_window.hpp"
#include "troupe/pgas.hpp"

namespace bale {

namespace pgas = troupe::pgas;

namespace {

constexpr std::int64_t empty = -1;

struct dart {
  std::int64_t slot;  // in the owner's part of the table
  std::int64_t item;
};

// The occupied slots of this PE's part, in order.
std::vector<std::int64_t> compact(const std::vector<std::int64_t>& table) {
  std::vector<std::int64_t> part;
  for (std::int64_t item : table)
    if (item != empty) part.push_back(item);
  return part;
}

}  // namespace

std::vector<std::int64_t> random_permutation(pgas::world& world, form how,
                                             std::int64_t items_per_pe, std::uint64_t seed) {
  const std::int64_t npes = world.npes();
  const std::int64_t slots_per_pe = 2 * items_per_pe;
  std::mt19937_64 random{seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(world.pe())};
  std::uniform_int_distribution<std::int64_t> pick{0, slots_per_pe * npes - 1};
  std::vector<std::int64_t> table(static_cast<std::size_t>(slots_per_pe), empty);
  std::vector<std::int64_t> throwing(static_cast<std::size_t>(items_per_pe));
  for (std::int64_t k = 0; k < items_per_pe; ++k)
    throwing[static_cast<std::size_t>(k)] = world.pe() * items_per_pe + k;

  if (how == form::rma) {
    rma_window window(table.size(), empty);
    MPI_Barrier(MPI_COMM_WORLD);
    for (std::int64_t item : throwing) {
      for (;;) {  // compare-and-swap into an empty slot, one dart at a time
        const std::int64_t slot = pick(random);
        const int owner = static_cast<int>(slot % npes);
        std::int64_t found = 0;
        MPI_Compare_and_swap(&item, &empty, &found, MPI_INT64_T, owner, slot / npes, window.get());
        MPI_Win_flush(owner, window.get());
        if (found == empty) break;
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(window.get());
    std::copy(window.data(), window.data() + table.size(), table.begin());
    return compact(table);
  }

  // The other forms throw in rounds: the misses are thrown again next round.
  std::vector<std::int64_t> missed;
  while (world.all_reduce(static_cast<std::int64_t>(throwing.size())) > 0) {
    missed.clear();
    if (how == form::alltoallv) {
      // Each superstep: the darts to the owners of their slots, whether each stuck back.
      alltoallv_exchange<dart> darts;
      std::vector<std::int64_t> slots;
      std::vector<std::uint8_t> stuck;
      for_each_superstep(throwing.size(), [&](std::size_t begin, std::size_t end) {
        slots.resize(end - begin);
        for (auto& slot : slots) slot = pick(random);
        darts.bucket(
            end - begin, [&](std::size_t i) { return static_cast<int>(slots[i] % npes); },
            [&](std::size_t i) {
              return dart{slots[i] / npes, throwing[begin + i]};
            });
        const auto arrived = darts.exchange();
        stuck.resize(arrived.size());
        for (std::size_t k = 0; k < arrived.size(); ++k) {
          std::int64_t& slot = table[static_cast<std::size_t>(arrived[k].slot)];
          stuck[k] = slot == empty;
          if (stuck[k]) slot = arrived[k].item;
        }
        const auto answers = darts.reply(std::span<const std::uint8_t>{stuck});
        for (std::size_t i = 0; i < answers.size(); ++i)
          if (!answers[i]) missed.push_back(throwing[begin + i]);
      });
    } else if (how == form::selector) {
      pgas::selector<2, dart>* self = nullptr;
      pgas::selector<2, dart> round{world,
                                    {[&](const dart& thrown, int from) {
                                       std::int64_t& slot =
                                           table[static_cast<std::size_t>(thrown.slot)];
                                       if (slot == empty)
                                         slot = thrown.item;
                                       else
                                         self->send(1, from, thrown);
                                     },
                                     [&](const dart& back, int) { missed.push_back(back.item); }}};
      self = &round;
      for (std::int64_t item : throwing) {
        const std::int64_t slot = pick(random);
        round.send(0, static_cast<int>(slot % npes), dart{slot / npes, item});
      }
      round.done(0);
      round.wait();
    } else {
      struct state {
        std::vector<std::int64_t>* table;
        std::vector<std::int64_t>* missed;
      } here{&table, &missed};
      using actor_type = pgas::lambda_actor<state>;
      actor_type round{world, here};
      for (std::int64_t item : throwing) {
        const std::int64_t slot = pick(random);
        const std::int64_t local = slot / npes;
        round.send(static_cast<int>(slot % npes), [local, item](state& s, actor_type::context& at) {
          std::int64_t& taken = (*s.table)[static_cast<std::size_t>(local)];
          if (taken == empty)
            taken = item;
          else
            at.send(at.from(), [item](state& back) { back.missed->push_back(item); });
        });
      }
      round.done();
      round.wait();
    }
    throwing.swap(missed);
  }
  return compact(table);
}

std::string check_permutation(pgas::world& world, std::span<const std::int64_t> part,
                              std::int64_t items_per_pe) {
  // Each item counts itself at the PE that started with it: every count must be 1.
  std::vector<std::int64_t> seen(static_cast<std::size_t>(items_per_pe), 0);
  const std::int64_t total = items_per_pe * world.npes();
  std::int64_t outside = 0;
  {
    pgas::actor<std::int64_t> count{
        world, [&](std::int64_t local, int) { ++seen[static_cast<std::size_t>(local)]; }};
    for (std::int64_t item : part) {
      if (item < 0 || item >= total) {
        ++outside;
        continue;
      }
      count.send(static_cast<int>(item / items_per_pe), item % items_per_pe);
    }
    count.done();
    count.wait();
  }
  std::int64_t wrong = outside;
  for (std::int64_t times : seen) wrong += times != 1;
  wrong = world.all_reduce(wrong);
  const std::int64_t held = world.all_reduce(static_cast<std::int64_t>(part.size()));
  if (held != total)
    return "the parts hold " + std::to_string(held) + " items, not " + std::to_string(total);
  if (wrong != 0) return std::to_string(wrong) + " items are missing, repeated or out of range";
  return {};
}

}  // namespace bale
