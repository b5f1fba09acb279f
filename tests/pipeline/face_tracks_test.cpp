// Which faces the faces stage restores on a frame (pipeline/face_tracks.h): a face lost for up to
// hold= frames is kept where it was last seen and then let go, landmarks are averaged with the
// best-matching face of the frames before, and the answer depends on the last memory() frames
// only, which is what makes a job's segment with that much context equal a pass.
#include <gtest/gtest.h>

#include "pipeline/face_tracks.h"

namespace framelift::pipeline {
namespace {

models::DetectedFace face_at(float x, float y, float landmark_offset = 0) {
  models::DetectedFace f;
  f.box = {x, y, x + 40, y + 50};
  f.score = 0.99f;
  for (int i = 0; i < 5; ++i) {
    f.landmarks[size_t(2 * i)] = x + 10 + 5 * float(i) + landmark_offset;
    f.landmarks[size_t(2 * i + 1)] = y + 20 + landmark_offset;
  }
  return f;
}

TEST(FaceTracks, ALostFaceIsHeldForHoldFramesThenLetGo) {
  FaceTracks tracks(2, 1);
  EXPECT_EQ(tracks.next({face_at(100, 100)}).size(), 1u);
  EXPECT_EQ(tracks.next({}).size(), 1u);  // lost for one frame: held
  EXPECT_EQ(tracks.next({}).size(), 1u);  // two: held
  EXPECT_EQ(tracks.next({}).size(), 0u);  // three: let go
}

TEST(FaceTracks, AHeldFaceIsNotAddedTwiceWhereItIsFoundAgain) {
  FaceTracks tracks(3, 1);
  tracks.next({face_at(100, 100), face_at(300, 100)});
  const auto faces = tracks.next({face_at(102, 101)});  // the second face is lost
  ASSERT_EQ(faces.size(), 2u);
  EXPECT_FLOAT_EQ(faces[0].box[0], 102);  // this frame's detection first
  EXPECT_FLOAT_EQ(faces[1].box[0], 300);  // then the held one, where it was last seen
}

TEST(FaceTracks, LandmarksAreAveragedOverSmoothFrames) {
  FaceTracks tracks(0, 3);
  tracks.next({face_at(100, 100, 0)});
  tracks.next({face_at(100, 100, 3)});
  const auto faces = tracks.next({face_at(100, 100, 6)});
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_FLOAT_EQ(faces[0].landmarks[0], 110 + 3);  // mean of offsets 0, 3, 6
  // A face elsewhere does not pull it: only the best overlap counts.
  FaceTracks other(0, 2);
  other.next({face_at(400, 400, 9)});
  EXPECT_FLOAT_EQ(other.next({face_at(100, 100, 0)})[0].landmarks[0], 110);
}

TEST(FaceTracks, TheAnswerDependsOnTheLastMemoryFramesOnly) {
  std::vector<std::vector<models::DetectedFace>> clip;
  for (int n = 0; n < 12; ++n) {
    std::vector<models::DetectedFace> d;
    if (n % 4 != 1) d.push_back(face_at(100 + 2.0f * float(n), 100, float(n % 3)));
    if (n % 5 == 0) d.push_back(face_at(300, 200 + float(n)));
    clip.push_back(d);
  }
  FaceTracks pass(2, 3);
  ASSERT_EQ(pass.memory(), 2);
  std::vector<std::vector<models::DetectedFace>> whole;
  for (const auto& d : clip) whole.push_back(pass.next(d));
  for (int start = 2; start < 12; ++start) {
    FaceTracks segment(2, 3);
    std::vector<models::DetectedFace> got;
    for (int n = start - segment.memory(); n <= start; ++n) got = segment.next(clip[size_t(n)]);
    ASSERT_EQ(got.size(), whole[size_t(start)].size()) << "frame " << start;
    for (size_t i = 0; i < got.size(); ++i)
      for (size_t k = 0; k < got[i].landmarks.size(); ++k) EXPECT_FLOAT_EQ(got[i].landmarks[k], whole[size_t(start)][i].landmarks[k]) << "frame " << start;
  }
}

TEST(FaceTracks, DetectionsOnAScaledCopyComeBackInFramePixelsAndSmallFacesAreDropped) {
  // Found on a half-size copy: eyes 5 px apart there, 10 in the frame.
  models::DetectedFace big = face_at(10, 20), small = face_at(100, 20);
  small.landmarks[2] = small.landmarks[0] + 2;  // eyes 2 px apart on the copy, 4 in the frame
  const auto faces = in_frame_pixels({big, small}, 2.0, 5.0);
  ASSERT_EQ(faces.size(), 1u);
  EXPECT_FLOAT_EQ(faces[0].box[0], 20);
  EXPECT_FLOAT_EQ(faces[0].box[3], 140);
  EXPECT_FLOAT_EQ(faces[0].landmarks[0], 40);
  EXPECT_FLOAT_EQ(faces[0].landmarks[2], 50);
  EXPECT_EQ(in_frame_pixels({big, small}, 4.0, 5.0).size(), 2u);  // 8 px apart at 4x
}

TEST(FaceTracks, BoxIou) {
  EXPECT_DOUBLE_EQ(box_iou({0, 0, 10, 10}, {0, 0, 10, 10}), 1.0);
  EXPECT_DOUBLE_EQ(box_iou({0, 0, 10, 10}, {5, 0, 15, 10}), 50.0 / 150.0);
  EXPECT_DOUBLE_EQ(box_iou({0, 0, 10, 10}, {20, 20, 30, 30}), 0.0);
}

}  // namespace
}  // namespace framelift::pipeline
