//! Any file, URL or device FFmpeg opens (feature `ffmpeg`): the best video
//! stream, decoded on FFmpeg's own threads, converted to RGB24 by swscale,
//! with each frame's presentation time.
//!
//! Costs are bounded the way the other sources bound them: a frame's size is
//! checked against [`FrameLimits`](cortex_core::limits::FrameLimits) before
//! the scaler or any RGB buffer is made for it. A packet that fails to decode
//! is counted and skipped (a damaged stretch of a recording should not end
//! the run); the stream fails only when every packet failed, or when the
//! input ends inside its data (its last reads failed: a file cut short,
//! whose frames before the cut are delivered first). A stream whose
//! frame size changes part-way is refused: the pipeline's state (the previous
//! frame, the sharpness baseline) is per size.

use ff::format::Pixel;
use ff::software::scaling;
use ffmpeg_next as ff;
use ndarray::Array3;

use super::{check_frame_size, Frame, FrameSource, SourceError};

/// Read errors in a row after which the input is given up as unreadable
/// (a demuxer that keeps failing without reaching the end).
const MAX_READ_ERRORS: u32 = 64;

/// Frames decoded by FFmpeg.
pub struct FfmpegSource {
    what: String,
    input: ff::format::context::Input,
    stream: usize,
    time_base: ff::Rational,
    frames_hint: Option<u64>,
    /// The stream's average frame rate, when it declares one.
    rate: Option<f64>,
    /// The packets of the video stream an MP4's index lists (see `open`).
    indexed: Option<u64>,
    decoder: ff::decoder::Video,
    decoded: ff::frame::Video,
    /// The converter and the input format it was made for.
    scaler: Option<(scaling::Context, Pixel)>,
    rgb: ff::frame::Video,
    /// The first frame's `(width, height)`: every later frame must match.
    size: Option<(u32, u32)>,
    next: u64,
    packets: u64,
    decode_errors: u64,
    last_error: Option<String>,
    /// Reads of the demuxer that failed since the last one that succeeded,
    /// and the last one's error: failures right before the end mean the
    /// input ends inside its data.
    read_errors: u32,
    last_read_error: Option<String>,
    eof_sent: bool,
    done: bool,
}

// SAFETY: every FFmpeg object here (demuxer, decoder, frames, scaler) is
// owned by this value alone and only ever used through `&mut self`, one
// thread at a time; FFmpeg allows moving such contexts between threads (its
// own frame threads are internal to the decoder and joined when it closes).
// The bindings share ownership of the demuxer with the decoder's context
// through a non-atomic `Rc`; every clone of it lives inside this value, so
// the count is only ever touched by the thread that holds the value.
unsafe impl Send for FfmpegSource {}

impl FfmpegSource {
    /// Opens `input` (a path, URL, or anything `avformat_open_input`
    /// accepts), picks its best video stream and opens a decoder for it with
    /// FFmpeg's automatic thread count.
    pub fn open(input: &str) -> Result<Self, SourceError> {
        Self::open_with(input, None)
    }

    /// [`FfmpegSource::open`] with a read timeout: a network read (or the
    /// opening) that waits longer fails, so a camera gone silent is
    /// noticed (FFmpeg's `rw_timeout`, and `timeout` for the protocols
    /// that read that one: RTSP, HTTP, TCP, UDP).
    pub fn open_with(
        input: &str,
        read_timeout: Option<std::time::Duration>,
    ) -> Result<Self, SourceError> {
        let fail = |why: String| SourceError::Video {
            what: input.to_string(),
            why,
        };
        ff::init().map_err(|e| fail(format!("FFmpeg did not initialise: {e}")))?;
        // FFmpeg's own log would print beside the runner's one-line errors
        // (decoders log a damaged packet even at the `fatal` level); decode
        // errors are counted and reported instead.
        ff::log::set_level(ff::log::Level::Quiet);
        let mut options = ff::Dictionary::new();
        if let Some(t) = read_timeout {
            let micros = t.as_micros().max(1).to_string();
            options.set("rw_timeout", &micros);
            options.set("timeout", &micros);
        }
        let ictx = ff::format::input_with_dictionary(&input, options)
            .map_err(|e| fail(format!("FFmpeg cannot open it: {e}")))?;
        let stream = ictx
            .streams()
            .best(ff::media::Type::Video)
            .ok_or_else(|| fail("no video stream".into()))?;
        let index = stream.index();
        let time_base = stream.time_base();
        let frames_hint = u64::try_from(stream.frames()).ok().filter(|&n| n > 0);
        let rate = stream.avg_frame_rate();
        let rate = (rate.numerator() > 0 && rate.denominator() > 0)
            .then(|| f64::from(rate.numerator()) / f64::from(rate.denominator()));
        // An MP4's (QuickTime's) index lists every sample, each read as one
        // packet: fewer packets than that, and the file was cut short (the
        // demuxer reads past the cut as the end, without an error). Other
        // containers' counts are estimates, or count dropped frames an AVI
        // stores as empty chunks the demuxer skips.
        let indexed = ictx
            .format()
            .name()
            .split(',')
            .any(|n| n == "mov" || n == "mp4");
        let mut ctx = ff::codec::context::Context::from_parameters(stream.parameters())
            .map_err(|e| fail(format!("stream parameters: {e}")))?;
        // Frame threads, as many as FFmpeg picks for the machine (0 = auto).
        ctx.set_threading(ff::threading::Config {
            kind: ff::threading::Type::Frame,
            count: 0,
            ..Default::default()
        });
        let decoder = ctx
            .decoder()
            .video()
            .map_err(|e| fail(format!("no decoder for the video stream: {e}")))?;
        Ok(FfmpegSource {
            what: input.to_string(),
            input: ictx,
            stream: index,
            time_base,
            frames_hint,
            rate,
            indexed: frames_hint.filter(|_| indexed),
            decoder,
            decoded: ff::frame::Video::empty(),
            scaler: None,
            rgb: ff::frame::Video::empty(),
            size: None,
            next: 0,
            packets: 0,
            decode_errors: 0,
            last_error: None,
            read_errors: 0,
            last_read_error: None,
            eof_sent: false,
            done: false,
        })
    }

    /// Packets of the video stream that failed to decode so far.
    pub fn decode_errors(&self) -> u64 {
        self.decode_errors
    }

    /// Packets of the video stream sent to the decoder so far.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    fn fail(&self, why: String) -> SourceError {
        SourceError::Video {
            what: self.what.clone(),
            why,
        }
    }

    fn count_error(&mut self, e: ff::Error) {
        self.decode_errors += 1;
        self.last_error = Some(e.to_string());
    }

    /// Decodes until a frame comes out (`Some`) or the stream ends (`None`).
    fn read(&mut self) -> Result<Option<Frame>, SourceError> {
        let again = ff::Error::Other {
            errno: ff::error::EAGAIN,
        };
        loop {
            match self.decoder.receive_frame(&mut self.decoded) {
                Ok(()) => return self.convert().map(Some),
                Err(ff::Error::Eof) => return self.finish().map(|()| None),
                Err(e) if e == again => {}
                // A frame the decoder could not reconstruct: counted, and the
                // next one is tried.
                Err(e) => {
                    self.count_error(e);
                    continue;
                }
            }
            if self.eof_sent {
                // Nothing more to send and the decoder wants more: done.
                return self.finish().map(|()| None);
            }
            let mut packet = ff::Packet::empty();
            match packet.read(&mut self.input) {
                Ok(()) => self.read_errors = 0,
                Err(ff::Error::Eof) => {
                    self.eof_sent = true;
                    // Draining: the decoder hands out what it still holds.
                    let _ = self.decoder.send_eof();
                    continue;
                }
                Err(e) => {
                    self.read_errors += 1;
                    self.last_read_error = Some(e.to_string());
                    if self.read_errors >= MAX_READ_ERRORS {
                        return Err(self.fail(format!("reading failed: {e}")));
                    }
                    continue;
                }
            }
            if packet.stream() != self.stream {
                continue;
            }
            self.packets += 1;
            if let Err(e) = self.decoder.send_packet(&packet) {
                if e != again {
                    self.count_error(e);
                }
            }
        }
    }

    /// The input ends inside its data: the demuxer's reads failed up to
    /// its end, or it read fewer packets than an MP4's index lists.
    fn truncated(&self) -> SourceError {
        let listed = self
            .indexed
            .filter(|&n| n > self.packets)
            .map_or_else(String::new, |n| format!(" of the {n} its index lists"));
        self.fail(format!(
            "truncated: the file ends inside its data after {} packets of the video stream{listed} (last read error: {})",
            self.packets,
            self.last_read_error.as_deref().unwrap_or("unknown")
        ))
    }

    /// At the end: a stream whose every packet failed is an error, and so
    /// is an input whose last reads failed (it ends before its data does:
    /// a truncated file).
    fn finish(&mut self) -> Result<(), SourceError> {
        if self.read_errors > 0 || self.indexed.is_some_and(|n| self.packets < n) {
            return Err(self.truncated());
        }
        if self.next == 0 && self.packets > 0 && self.decode_errors >= self.packets {
            let last = self.last_error.take().unwrap_or_default();
            return Err(self.fail(format!(
                "no packet of the video stream decodes ({} of {} failed; last error: {last})",
                self.decode_errors, self.packets
            )));
        }
        Ok(())
    }

    /// The decoded frame as RGB: its size checked first (limits, and the
    /// same size as the first frame), then the scaler made or reused.
    fn convert(&mut self) -> Result<Frame, SourceError> {
        let (w, h) = (self.decoded.width(), self.decoded.height());
        match self.size {
            Some(first) if first != (w, h) => {
                return Err(SourceError::SizeChanged {
                    what: self.what.clone(),
                    frame: self.next,
                    from: (first.0 as usize, first.1 as usize),
                    to: (w as usize, h as usize),
                })
            }
            Some(_) => {}
            None => {
                check_frame_size(&self.what, w as usize, h as usize)?;
                self.size = Some((w, h));
            }
        }
        let format = self.decoded.format();
        if self.scaler.as_ref().map(|(_, f)| *f) != Some(format) {
            // Full chroma interpolation and accurate rounding: the RGB is
            // as close to the exact BT.601 conversion as swscale gets.
            let flags = scaling::Flags::BILINEAR
                | scaling::Flags::ACCURATE_RND
                | scaling::Flags::FULL_CHR_H_INT
                | scaling::Flags::BITEXACT;
            let ctx = scaling::Context::get(format, w, h, Pixel::RGB24, w, h, flags)
                .map_err(|e| self.fail(format!("no conversion from {format:?} to RGB: {e}")))?;
            self.scaler = Some((ctx, format));
        }
        let Some((scaler, _)) = self.scaler.as_mut() else {
            return Err(self.fail("no converter".into()));
        };
        scaler
            .run(&self.decoded, &mut self.rgb)
            .map_err(|e| SourceError::Video {
                what: self.what.clone(),
                why: format!("conversion to RGB: {e}"),
            })?;
        let (wu, hu) = (w as usize, h as usize);
        let stride = self.rgb.stride(0);
        let data = self.rgb.data(0);
        let mut image = Array3::<u8>::zeros((hu, wu, 3));
        if let Some(out) = image.as_slice_mut() {
            for (y, row) in out.chunks_exact_mut(wu * 3).enumerate() {
                let start = y * stride;
                row.copy_from_slice(&data[start..start + wu * 3]);
            }
        }
        let timestamp = self.decoded.timestamp().map(|pts| {
            pts as f64 * f64::from(self.time_base.numerator())
                / f64::from(self.time_base.denominator().max(1))
        });
        let index = self.next;
        self.next += 1;
        Ok(Frame {
            index,
            timestamp,
            image,
            missed_before: 0,
        })
    }
}

impl FrameSource for FfmpegSource {
    fn next_frame(&mut self) -> Option<Result<Frame, SourceError>> {
        if self.done {
            return None;
        }
        let read = self.read();
        super::until_end(&mut self.done, read)
    }

    fn len_hint(&self) -> Option<u64> {
        self.frames_hint.map(|n| n.saturating_sub(self.next))
    }

    fn describe(&self) -> String {
        format!("{} (FFmpeg)", self.what)
    }

    fn frame_rate(&self) -> Option<f64> {
        self.rate
    }

    fn notes(&self) -> Vec<String> {
        if self.decode_errors == 0 {
            return Vec::new();
        }
        vec![format!(
            "{}: {} of {} packets failed to decode and were skipped (last error: {})",
            self.what,
            self.decode_errors,
            self.packets,
            self.last_error.as_deref().unwrap_or("unknown")
        )]
    }
}
