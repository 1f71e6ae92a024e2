#pragma once
// The page's files, built into the binary (tools/web/page/, turned into page_assets.cpp by CMake), so
// rmbus-web needs no files at run time and the page loads nothing from the network.

#include <string_view>

namespace rmbus::web {

std::string_view page_html();
std::string_view page_js();
std::string_view page_css();

}  // namespace rmbus::web
