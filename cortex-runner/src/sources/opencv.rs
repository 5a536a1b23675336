//! Any video file or camera OpenCV's `VideoCapture` opens (feature
//! `opencv`): frames converted from BGR to RGB, timestamps from the
//! capture's position.

use ndarray::Array3;
use opencv::core::{Mat, MatTraitConst, MatTraitConstManual};
use opencv::videoio::{self, VideoCapture, VideoCaptureTrait, VideoCaptureTraitConst};

use super::{check_frame_size, Frame, FrameSource, SourceError};

/// Frames from an OpenCV `VideoCapture`.
pub struct VideoSource {
    what: String,
    capture: VideoCapture,
    mat: Mat,
    next: u64,
    done: bool,
}

impl VideoSource {
    /// Opens `input`: a camera index when `camera` is `Some("N")`, otherwise
    /// a file or URL OpenCV understands.
    pub fn open(input: &str, camera: Option<&str>) -> Result<Self, SourceError> {
        let fail = |why: String| SourceError::Video {
            what: input.to_string(),
            why,
        };
        let capture = match camera {
            Some(n) => {
                let index: i32 = n
                    .parse()
                    .map_err(|_| fail(format!("`{n}` is not a camera number")))?;
                VideoCapture::new(index, videoio::CAP_ANY)
            }
            None => VideoCapture::from_file(input, videoio::CAP_ANY),
        }
        .map_err(|e| fail(e.to_string()))?;
        if !capture.is_opened().map_err(|e| fail(e.to_string()))? {
            return Err(fail("OpenCV cannot open it".into()));
        }
        Ok(VideoSource {
            what: input.to_string(),
            capture,
            mat: Mat::default(),
            next: 0,
            done: false,
        })
    }

    fn read(&mut self) -> Result<Option<Frame>, SourceError> {
        let fail = |why: String| SourceError::Video {
            what: self.what.clone(),
            why,
        };
        let got = self
            .capture
            .read(&mut self.mat)
            .map_err(|e| fail(e.to_string()))?;
        if !got || self.mat.empty() {
            return Ok(None);
        }
        let (w, h) = (self.mat.cols() as usize, self.mat.rows() as usize);
        check_frame_size(&self.what, w, h)?;
        if self.mat.channels() != 3 || self.mat.depth() != opencv::core::CV_8U {
            return Err(fail(format!(
                "frame of {} channels, depth {}: expected 8-bit BGR",
                self.mat.channels(),
                self.mat.depth()
            )));
        }
        let bgr = if self.mat.is_continuous() {
            self.mat
                .data_bytes()
                .map_err(|e| fail(e.to_string()))?
                .to_vec()
        } else {
            self.mat
                .try_clone()
                .and_then(|m| m.data_bytes().map(<[u8]>::to_vec))
                .map_err(|e| fail(e.to_string()))?
        };
        let mut rgb = Array3::<u8>::zeros((h, w, 3));
        // Swap B and R while copying.
        if let Some(out) = rgb.as_slice_mut() {
            for (o, i) in out.chunks_exact_mut(3).zip(bgr.chunks_exact(3)) {
                o.copy_from_slice(&[i[2], i[1], i[0]]);
            }
        }
        let ms = self
            .capture
            .get(videoio::CAP_PROP_POS_MSEC)
            .ok()
            .filter(|t| t.is_finite() && *t >= 0.0);
        let index = self.next;
        self.next += 1;
        Ok(Some(Frame {
            index,
            timestamp: ms.map(|t| t / 1e3),
            image: rgb,
            missed_before: 0,
        }))
    }
}

impl FrameSource for VideoSource {
    fn next_frame(&mut self) -> Option<Result<Frame, SourceError>> {
        if self.done {
            return None;
        }
        let read = self.read();
        super::until_end(&mut self.done, read)
    }

    fn len_hint(&self) -> Option<u64> {
        let n = self.capture.get(videoio::CAP_PROP_FRAME_COUNT).ok()?;
        (n.is_finite() && n > 0.0).then(|| (n as u64).saturating_sub(self.next))
    }

    fn describe(&self) -> String {
        format!("{} (OpenCV)", self.what)
    }
}
