// SPDX-License-Identifier: Apache-2.0
// The module's parsed backend_config values. Apart from ir.cc so that the full nlohmann header
// reaches only this file: included beside the printer's string code, it changed what GCC inlines
// there.
#include <nlohmann/json.hpp>

#include "ir/ir.h"

namespace nhlo {

const nlohmann::json* Module::ParseJson(std::string_view text) {
  if (text.empty()) return nullptr;
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return nullptr;
  json_values_.emplace_back(new nlohmann::json(std::move(value)));
  return json_values_.back().get();
}

void Module::JsonDeleter::operator()(nlohmann::json* value) const { delete value; }

}  // namespace nhlo
