#pragma once
// Pipeline, Source and Sink keep their state behind one pointer, which a move takes away. Every
// call on the object left behind goes through live(), so it is an Error(Usage) the caller can
// catch instead of a null dereference.
#include <memory>

#include "util/error.h"
#include "util/str.h"

namespace framelift::api {

template <class Impl>
Impl& live(const std::unique_ptr<Impl>& impl, const char* class_name) {
  if (!impl) throw Error(ErrorKind::Usage, str("framelift::", class_name, ": used after being moved from"));
  return *impl;
}

}  // namespace framelift::api
