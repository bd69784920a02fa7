#pragma once
// Small helpers for the XML files simrun writes by hand (.pvd, .xmf).
#include <string>
#include <string_view>

namespace simrun::framework {

// Escapes &, <, > and " for use in XML text and attribute values.
std::string xml_escape(std::string_view text);
// The shortest text that reads back as the same double ("%.17g").
std::string format_double(double value);

}  // namespace simrun::framework
