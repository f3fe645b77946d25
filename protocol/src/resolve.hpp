#pragma once
#include "dnnc/protocol/resolve.hpp"
