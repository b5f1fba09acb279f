#pragma once
// The one list of architectures. Adding one is its own files plus one line here:
//   NETWORK(id)      a declaration, id_declaration() in src/arch/ID.cpp, and a network,
//                    id_architecture() in src/models/ (detector and builder);
//   DECLARATION(id)  a declaration whose network is built elsewhere (RIFE: src/models/rife_native.cpp,
//                    IFRNet: src/models/ifrnet.cpp are interpolators, opened by open_interpolator
//                    rather than the image registry).
// Every table that needs the list expands it (arch/declarations.cpp, models/builtin_architectures.cpp),
// so the tables cannot drift apart, and two people adding architectures touch only this file in
// common, a line each.
//
// Order: the order `framelift models info` lists tried architectures in, and the order of
// arch::declarations(). It is not a priority: detectors are exclusive (each reference checkpoint is
// claimed by exactly one, tests/models/detection_exclusive_test.cpp), and models::detect() refuses
// a file two of them claim rather than letting the earlier one win.
#define FRAMELIFT_ARCHITECTURES(NETWORK, DECLARATION) \
  NETWORK(srvgg_compact)                              \
  NETWORK(rrdbnet)                                    \
  NETWORK(realcugan)                                  \
  NETWORK(omnisr)                                     \
  NETWORK(waifu2x_cunet)                              \
  NETWORK(waifu2x_upconv7)                            \
  NETWORK(span)                                       \
  NETWORK(swinir)                                     \
  NETWORK(hat)                                        \
  NETWORK(dat)                                        \
  NETWORK(safmn)                                      \
  NETWORK(mosr)                                       \
  NETWORK(plksr)                                      \
  NETWORK(realplksr)                                  \
  NETWORK(drunet)                                     \
  NETWORK(nafnet)                                     \
  NETWORK(fbcnn)                                      \
  NETWORK(scunet)                                     \
  NETWORK(swin2sr)                                    \
  NETWORK(drct)                                       \
  NETWORK(srformer)                                   \
  NETWORK(atd)                                        \
  NETWORK(fast_neural_style)                          \
  NETWORK(lama)                                       \
  NETWORK(ddcolor)                                    \
  NETWORK(gfpgan)                                     \
  NETWORK(codeformer)                                 \
  NETWORK(restoreformer)                              \
  NETWORK(mat)                                        \
  DECLARATION(rife)                                   \
  DECLARATION(ifrnet)                                 \
  DECLARATION(film)                                   \
  DECLARATION(gmfss)                                  \
  DECLARATION(retinaface)
