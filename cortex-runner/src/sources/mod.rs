//! Frame sources for the runner: where frames come from, one at a time.
//!
//! Every source is lazy — it decodes or generates the next frame only when
//! asked — so a long clip never sits in memory, and every source checks a
//! frame's size against the resource policy ([`FrameLimits`]) before
//! allocating its pixels.
//!
//! Every source is `Send` ([`open`] returns `Box<dyn FrameSource + Send>`),
//! so a pipelined run can read it on its producer thread while the pipeline
//! works on earlier frames.
//!
//! | input | source |
//! |---|---|
//! | none | [`SyntheticClip`]: a generated clip exercising every L2 node |
//! | `-` or `*.y4m` | [`Y4mSource`]: YUV4MPEG2, 8-bit 4:2:0 or 4:4:4, BT.601 limited range |
//! | a directory, a glob (`frames/*.png`) or one image | [`ImageSource`]: PNG / JPEG frames in name order |
//! | any other file, or a URL (`scheme://…`) | [`FfmpegSource`] (feature `ffmpeg`): whatever FFmpeg opens |
//! | any other file (without `ffmpeg`), or `camera:N` | OpenCV `VideoCapture` (feature `opencv`) |
//!
//! FFmpeg is the way to read video: it decodes on its own threads, reads
//! every container and codec the system's libavcodec has, and links only
//! FFmpeg's libraries. The OpenCV source stays for cameras by number
//! (`camera:N`) and for builds that have OpenCV for its kernels anyway; when
//! both features are on, files and URLs go to FFmpeg.

#[cfg(feature = "ffmpeg")]
mod ffmpeg;
mod images;
#[cfg(feature = "opencv")]
mod opencv;
mod reconnect;
mod synthetic;
mod y4m;

use std::io::Read;
use std::path::{Path, PathBuf};

use cortex_core::limits::FrameLimits;
use cortex_vision::ops::RgbFrame;

#[cfg(feature = "ffmpeg")]
pub use ffmpeg::FfmpegSource;
pub use images::ImageSource;
#[cfg(feature = "opencv")]
pub use opencv::VideoSource;
pub(crate) use reconnect::duration as reconnect_duration;
pub use reconnect::{ReconnectPolicy, Reconnecting, Reopen};
pub use synthetic::{SyntheticClip, SyntheticLayout};
pub use y4m::{yuv_to_rgb_bt601, Y4mSource};

/// One decoded frame.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Position in the stream, from 0.
    pub index: u64,
    /// Presentation time in seconds, when the source knows it (Y4M frame
    /// rate, video timestamps, the synthetic clip's 30 fps).
    pub timestamp: Option<f64>,
    /// The pixels, `height × width × 3` RGB.
    pub image: RgbFrame,
    /// Frames the input missed just before this one: a network input that
    /// reconnected ([`Reconnecting`]) counts the frames it would have
    /// delivered while it was away (its index skips them too); 0 otherwise.
    pub missed_before: u64,
}

impl Frame {
    /// `(width, height)` of the frame.
    pub fn size(&self) -> (usize, usize) {
        let (h, w, _) = self.image.dim();
        (w, h)
    }
}

/// Why a source could not open or deliver a frame.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// The input path does not exist.
    #[error("{0}: no such file or directory")]
    NotFound(PathBuf),
    /// A directory or glob that holds no PNG or JPEG file.
    #[error("{0}: no frames (no .png, .jpg or .jpeg files)")]
    NoFrames(PathBuf),
    /// Reading failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being read.
        what: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A malformed YUV4MPEG2 stream.
    #[error("{what}: not a valid YUV4MPEG2 stream: {why}")]
    Y4m {
        /// The input.
        what: String,
        /// What is wrong.
        why: String,
    },
    /// A Y4M colour space the runner does not convert.
    #[error("{what}: unsupported Y4M colour space `{colorspace}` (supported: 8-bit 420, 420jpeg, 420mpeg2, 420paldv, 444; convert with `ffmpeg … -pix_fmt yuv420p`)")]
    UnsupportedColorspace {
        /// The input.
        what: String,
        /// The `C` tag as written.
        colorspace: String,
    },
    /// The stream ends in the middle of a frame.
    #[error("{what}: truncated at frame {frame}")]
    Truncated {
        /// The input.
        what: String,
        /// The frame that is cut short.
        frame: u64,
    },
    /// An image file that does not decode (corrupt, truncated, unsupported).
    #[error("{path}: cannot decode image: {why}")]
    Decode {
        /// The file.
        path: PathBuf,
        /// The decoder's message.
        why: String,
    },
    /// A frame larger than the resource policy ([`FrameLimits`]) allows.
    #[error("{what}: frame of {width}x{height} exceeds the limit ({max_side} px a side, {max_pixels} pixels)")]
    TooLarge {
        /// The input.
        what: String,
        /// Declared width.
        width: usize,
        /// Declared height.
        height: usize,
        /// The policy's longest side.
        max_side: usize,
        /// The policy's pixel count.
        max_pixels: usize,
    },
    /// A frame with no pixels.
    #[error("{what}: empty frame ({width}x{height})")]
    Empty {
        /// The input.
        what: String,
        /// Declared width.
        width: usize,
        /// Declared height.
        height: usize,
    },
    /// An input this build cannot read.
    #[error("{0}")]
    Unsupported(String),
    /// The video library (FFmpeg or OpenCV) failed to open or read the
    /// input.
    #[error("{what}: {why}")]
    Video {
        /// The input.
        what: String,
        /// The library's message.
        why: String,
    },
    /// A video whose frame size changes part-way (the pipeline's state is
    /// per size).
    #[error("{what}: frame {frame} is {}x{}, the stream started at {}x{} (a size change mid-stream is not supported; split the input or scale it to one size)", to.0, to.1, from.0, from.1)]
    SizeChanged {
        /// The input.
        what: String,
        /// The first frame of the new size.
        frame: u64,
        /// `(width, height)` of the first frame.
        from: (usize, usize),
        /// `(width, height)` of this frame.
        to: (usize, usize),
    },
}

/// A stream of frames, read one at a time.
pub trait FrameSource {
    /// The next frame, `None` at the end of the stream. After an error the
    /// source should not be read again.
    fn next_frame(&mut self) -> Option<Result<Frame, SourceError>>;

    /// How many frames remain, if known (for a progress bar).
    fn len_hint(&self) -> Option<u64> {
        None
    }

    /// A short description for messages, e.g. the path.
    fn describe(&self) -> String;

    /// Frames a second, when the input says (a video stream's average
    /// rate): what a reconnecting input counts missed frames by.
    fn frame_rate(&self) -> Option<f64> {
        None
    }

    /// What the run's summary should tell about the input once it is read
    /// (e.g. packets that failed to decode and were skipped).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}

impl<S: FrameSource + ?Sized> FrameSource for Box<S> {
    fn next_frame(&mut self) -> Option<Result<Frame, SourceError>> {
        (**self).next_frame()
    }
    fn len_hint(&self) -> Option<u64> {
        (**self).len_hint()
    }
    fn describe(&self) -> String {
        (**self).describe()
    }
    fn frame_rate(&self) -> Option<f64> {
        (**self).frame_rate()
    }
    fn notes(&self) -> Vec<String> {
        (**self).notes()
    }
}

/// Checks a frame size against the resource policy
/// ([`FrameLimits::current`]) before any pixel buffer is allocated; a frame
/// with a zero side is refused too.
fn check_frame_size(what: &str, width: usize, height: usize) -> Result<(), SourceError> {
    if width == 0 || height == 0 {
        return Err(SourceError::Empty {
            what: what.to_string(),
            width,
            height,
        });
    }
    let limits = FrameLimits::current();
    limits
        .check(width, height)
        .map_err(|_| SourceError::TooLarge {
            what: what.to_string(),
            width,
            height,
            max_side: limits.max_side,
            max_pixels: limits.max_pixels,
        })
}

/// A source's next frame from what it read: the frame, or nothing at its
/// end, or its error; after the end or an error, `done` is set so the
/// source yields nothing more.
#[cfg(any(feature = "ffmpeg", feature = "opencv"))]
pub(crate) fn until_end(
    done: &mut bool,
    read: Result<Option<Frame>, SourceError>,
) -> Option<Result<Frame, SourceError>> {
    let next = read.transpose();
    *done = !matches!(next, Some(Ok(_)));
    next
}

/// What an `--input` value names, known without opening it.
enum Input<'a> {
    Stdin,
    Images(ImageSource),
    Y4m(&'a Path),
    /// A video file, URL or camera, with the backend that opens it.
    Video(VideoOpener),
}

/// Opens a video input (its backend in this build).
type VideoOpener = fn(&str) -> Result<Box<dyn FrameSource + Send>, SourceError>;

/// What `input` names, from its text and the file system's metadata
/// alone: nothing is opened (a FIFO would block until a writer comes).
/// A directory or glob is listed (its frames are opened one at a time
/// later).
fn classify(input: &str) -> Result<Input<'_>, SourceError> {
    if input == "-" {
        return Ok(Input::Stdin);
    }
    if let Some(camera) = input.strip_prefix("camera:") {
        return video_opener(input, Some(camera)).map(Input::Video);
    }
    if input.contains("://") {
        return url_opener(input).map(Input::Video);
    }
    if input.contains(['*', '?']) {
        return ImageSource::from_glob(input).map(Input::Images);
    }
    let path = Path::new(input);
    if !path.exists() {
        return Err(SourceError::NotFound(path.to_path_buf()));
    }
    if path.is_dir() {
        return ImageSource::from_dir(path).map(Input::Images);
    }
    match extension(path).as_deref() {
        Some("y4m") => Ok(Input::Y4m(path)),
        Some(e) if images::is_image_extension(e) => {
            Ok(Input::Images(ImageSource::from_files(vec![
                path.to_path_buf()
            ])))
        }
        _ => video_opener(input, None).map(Input::Video),
    }
}

/// Checks what can be checked of an `--input` value without opening it —
/// the path exists, a directory or glob holds frames, this build reads the
/// kind of input — so that a mistyped command line is refused before any
/// stream starts. [`open`] checks the same, then opens.
pub fn check(input: &str) -> Result<(), SourceError> {
    classify(input).map(|_| ())
}

/// Opens the source an `--input` value names (see the module table);
/// `None` is the synthetic clip of `width × height`. `stdin` is what `-`
/// reads. Everything that can be checked before the first frame (the path
/// exists, a directory holds frames, a Y4M header is valid and supported)
/// is checked here, so a bad input fails before any output is produced.
/// Opening a FIFO waits for its writer: open each input of a multi-input
/// run on its own thread.
pub fn open(
    input: Option<&str>,
    synthetic_size: (usize, usize),
    stdin: Box<dyn Read + Send>,
) -> Result<Box<dyn FrameSource + Send>, SourceError> {
    open_with(input, synthetic_size, stdin, &NetworkOptions::default())
}

/// How network inputs (URLs) are read: their read timeout, and whether
/// they are reopened when they stall, fail or close.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NetworkOptions {
    /// A read that waits longer fails (a silent camera is noticed);
    /// `None`: wait forever. Default: 10 s.
    pub read_timeout: Option<std::time::Duration>,
    /// Reopen the input under this policy instead of ending its stream.
    pub reconnect: Option<ReconnectPolicy>,
}

impl Default for NetworkOptions {
    fn default() -> Self {
        NetworkOptions {
            read_timeout: Some(std::time::Duration::from_secs(10)),
            reconnect: None,
        }
    }
}

/// Whether an `--input` value is a network input (a URL other than
/// `file:`), which [`NetworkOptions`] apply to.
pub fn is_network(input: &str) -> bool {
    input.contains("://") && !input.starts_with("file:")
}

/// [`open`], with `network` for a network input: its read timeout, and
/// with a reconnect policy a [`Reconnecting`] source (opened under that
/// policy: an input not up yet is waited for).
pub fn open_with(
    input: Option<&str>,
    synthetic_size: (usize, usize),
    stdin: Box<dyn Read + Send>,
    network: &NetworkOptions,
) -> Result<Box<dyn FrameSource + Send>, SourceError> {
    let Some(input) = input else {
        return Ok(Box::new(synthetic(synthetic_size, None)?));
    };
    match classify(input)? {
        Input::Stdin => Ok(Box::new(Y4mSource::new("stdin", stdin)?)),
        Input::Images(images) => Ok(Box::new(images)),
        Input::Y4m(path) => {
            let file = std::fs::File::open(path).map_err(|source| SourceError::Io {
                what: input.to_string(),
                source,
            })?;
            Ok(Box::new(Y4mSource::new(input, Box::new(file))?))
        }
        Input::Video(open) if !is_network(input) => open(input),
        Input::Video(_) => {
            let timeout = network.read_timeout;
            let url = input.to_string();
            let mut reopen: Reopen = Box::new(move || open_url(&url, timeout));
            match network.reconnect {
                None => reopen(),
                Some(policy) => Ok(Box::new(Reconnecting::open(input, policy, reopen)?)),
            }
        }
    }
}

#[cfg(feature = "ffmpeg")]
fn open_url(
    input: &str,
    read_timeout: Option<std::time::Duration>,
) -> Result<Box<dyn FrameSource + Send>, SourceError> {
    Ok(Box::new(FfmpegSource::open_with(input, read_timeout)?))
}

/// Without FFmpeg a URL is refused when it is classified; this is never
/// reached.
#[cfg(not(feature = "ffmpeg"))]
fn open_url(
    input: &str,
    _: Option<std::time::Duration>,
) -> Result<Box<dyn FrameSource + Send>, SourceError> {
    url_opener(input).and_then(|open| open(input))
}

/// The synthetic clip of `width × height` ([`SyntheticLayout::DEFAULT`]),
/// lengthened to `frames` when more are asked for than it scripts: past its
/// last event the second scene goes on with the object at rest.
pub fn synthetic(
    (width, height): (usize, usize),
    frames: Option<u64>,
) -> Result<SyntheticClip, SourceError> {
    check_frame_size("synthetic clip", width, height)?;
    let layout = SyntheticLayout::DEFAULT;
    let len = frames.map_or(layout.len, |n| n.max(layout.len));
    Ok(SyntheticClip::new(width, height).with_layout(SyntheticLayout { len, ..layout }))
}

/// Lower-case extension of a path.
fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

#[cfg(feature = "ffmpeg")]
fn url_opener(_: &str) -> Result<VideoOpener, SourceError> {
    Ok(|input| Ok(Box::new(FfmpegSource::open(input)?)))
}

#[cfg(not(feature = "ffmpeg"))]
fn url_opener(input: &str) -> Result<VideoOpener, SourceError> {
    Err(SourceError::Unsupported(format!(
        "{input}: URLs need a build with `--features ffmpeg`"
    )))
}

/// OpenCV's `VideoCapture`: a camera by number (`camera:N`) or a file.
#[cfg(feature = "opencv")]
fn opencv_open(input: &str) -> Result<Box<dyn FrameSource + Send>, SourceError> {
    let camera = input.strip_prefix("camera:");
    Ok(Box::new(VideoSource::open(input, camera)?))
}

#[cfg(feature = "ffmpeg")]
fn video_opener(input: &str, camera: Option<&str>) -> Result<VideoOpener, SourceError> {
    match camera {
        None => Ok(|input| Ok(Box::new(FfmpegSource::open(input)?))),
        Some(_) => camera_opener(input),
    }
}

/// Cameras by number go to OpenCV, also when FFmpeg reads the files.
#[cfg(all(feature = "ffmpeg", feature = "opencv"))]
fn camera_opener(_: &str) -> Result<VideoOpener, SourceError> {
    Ok(opencv_open)
}

#[cfg(all(feature = "ffmpeg", not(feature = "opencv")))]
fn camera_opener(input: &str) -> Result<VideoOpener, SourceError> {
    Err(SourceError::Unsupported(format!(
        "{input}: cameras by number need a build with `--features opencv` (FFmpeg reads a device by its path or URL)"
    )))
}

#[cfg(all(feature = "opencv", not(feature = "ffmpeg")))]
fn video_opener(_: &str, _camera: Option<&str>) -> Result<VideoOpener, SourceError> {
    Ok(opencv_open)
}

#[cfg(not(any(feature = "opencv", feature = "ffmpeg")))]
fn video_opener(input: &str, _camera: Option<&str>) -> Result<VideoOpener, SourceError> {
    Err(SourceError::Unsupported(format!(
        "{input}: not a .y4m file, an image or a directory of images; video files need a build with `--features ffmpeg` (cameras `--features opencv`) (or pipe through `ffmpeg -i {input} -f yuv4mpegpipe -`)"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_size_policy() {
        assert!(check_frame_size("x", 640, 480).is_ok());
        let max_side = FrameLimits::current().max_side;
        assert!(check_frame_size("x", max_side, 1).is_ok());
        assert!(matches!(
            check_frame_size("x", 0, 480),
            Err(SourceError::Empty { .. })
        ));
        assert!(matches!(
            check_frame_size("x", max_side + 1, 1),
            Err(SourceError::TooLarge { .. })
        ));
        assert!(matches!(
            check_frame_size("x", 16_000, 16_000),
            Err(SourceError::TooLarge { .. })
        ));
        assert!(matches!(
            check_frame_size("x", usize::MAX, usize::MAX),
            Err(SourceError::TooLarge { .. })
        ));
    }
}
