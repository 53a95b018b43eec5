#include "troupe/pgas/world.hpp"

#include "pgas/mpi_engine.hpp"
#include "troupe/async/error.hpp"

namespace troupe::pgas {

namespace {

MPI_Datatype datatype(int kind) {
  static constexpr MPI_Datatype types[] = {MPI_INT32_T,  MPI_INT64_T, MPI_UINT32_T,
                                           MPI_UINT64_T, MPI_FLOAT,   MPI_DOUBLE};
  return types[kind];
}

}  // namespace

world::world(int& argc, char**& argv, world_options options)
    : engine_(std::make_unique<detail::mpi_engine>(&argc, &argv, options.buffer_bytes)) {}

world::world(world_options options)
    : engine_(std::make_unique<detail::mpi_engine>(nullptr, nullptr, options.buffer_bytes)) {}

world::~world() = default;

void world::barrier() {
  auto& engine = static_cast<detail::mpi_engine&>(*engine_);
  if (engine.in_handler())
    throw error(errc::invalid_argument,
                "pgas::world::barrier: called inside a handler, where it could never return");
  // First what this PE has finished sending: all of it delivered and processed everywhere.
  for (std::size_t index = 0; index < engine.selectors().size(); ++index) {
    detail::mailbox_set* set = engine.selectors()[index];
    if (set != nullptr && set->roots_done())
      while (!set->terminated()) engine.progress(true);
  }
  MPI_Request request;
  MPI_Ibarrier(engine.comm(), &request);
  engine.wait_for(request);
  engine.throw_unreported(true);
}

void world::reduce(void* data, std::size_t count, scalar kind, reduction op) {
  auto& engine = static_cast<detail::mpi_engine&>(*engine_);
  const MPI_Op mpi_op = op == reduction::sum ? MPI_SUM : op == reduction::min ? MPI_MIN : MPI_MAX;
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count), datatype(static_cast<int>(kind)),
                 mpi_op, engine.comm(), &request);
  engine.wait_for(request);
  engine.throw_unreported(false);
}

std::vector<std::int64_t> world::all_to_all(std::span<const std::int64_t> counts) {
  auto& engine = static_cast<detail::mpi_engine&>(*engine_);
  if (counts.size() != static_cast<std::size_t>(npes()))
    throw error(errc::invalid_argument, "pgas::world::all_to_all: expected one count per PE (" +
                                            std::to_string(npes()) + "), found " +
                                            std::to_string(counts.size()));
  std::vector<std::int64_t> received(counts.size());
  MPI_Request request;
  MPI_Ialltoall(counts.data(), 1, MPI_INT64_T, received.data(), 1, MPI_INT64_T, engine.comm(),
                &request);
  engine.wait_for(request);
  engine.throw_unreported(false);
  return received;
}

}  // namespace troupe::pgas
