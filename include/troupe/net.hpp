#pragma once

// The net layer: the actor systems of an MPI job's processes (nodes) as one. Handles cross
// nodes in messages, actors are spawned and looked up on any node by name, monitors and links
// reach across. Link troupe::net; start the program with mpirun (or srun).

#include "troupe/core.hpp"
#include "troupe/net/cluster.hpp"
