//! The FFmpeg encoder behind `run --encode`: opens the codec with the
//! settings ROI needs, converts frames to 4:2:0 and attaches each frame's
//! side data.

use super::blocks::{self, CodecGrid};
use super::*;
use ff::format::Pixel;
use ffmpeg_next as ff;
use std::path::Path;

use cortex_core::untrusted::kind_of;

/// Output time base: milliseconds.
const TIME_BASE: (i32, i32) = (1, 1000);

/// The encoder of one run, opened on the first frame (its size).
pub(crate) struct Encoder {
    path: PathBuf,
    codec_name: String,
    codec: ff::Codec,
    roi: RoiSwitch,
    /// How the codec reads rectangles back into blocks (`--roi map`).
    grid: Option<CodecGrid>,
    /// `--roi map`: rectangles sent, and those left out past the bound.
    rects: u64,
    dropped: u64,
    strength: f32,
    background: f32,
    crf: Option<u32>,
    /// The output, created with the encoder on the first frame.
    octx: Option<ff::format::context::Output>,
    open: Option<Opened>,
    frames: u64,
    first_pts: Option<i64>,
    last_pts: i64,
    /// The last step between frames, in ms: the duration of packets
    /// the encoder leaves without one (MP4's edit list would cut the
    /// last frame otherwise).
    step: i64,
    /// A FIFO's write end, opened while checking the path and held until
    /// the output is open.
    reader_held: Option<std::fs::File>,
}

struct Opened {
    enc: ff::encoder::Video,
    scaler: ff::software::scaling::Context,
    rgb: ff::frame::Video,
    size: (u32, u32),
    stream_tb: ff::Rational,
}

fn fail(path: &Path, why: impl std::fmt::Display) -> RunnerError {
    RunnerError::Encode(format!("{}: {why}", path.display()))
}

impl Encoder {
    /// Finds the codec and the container, and checks the output path
    /// (all before the input opens, so a wrong name or path costs
    /// nothing); `None` without `--encode`. The file itself is created
    /// with the encoder, on the first frame: a run refused before then
    /// leaves nothing behind.
    pub(crate) fn open(args: &RunArgs) -> Result<Option<Encoder>, RunnerError> {
        let Some(path) = args.encode.clone() else {
            return Ok(None);
        };
        ff::init().map_err(|e| fail(&path, e))?;
        ff::log::set_level(ff::log::Level::Quiet);
        let codec_name = args.codec.clone().unwrap_or_else(|| "libx264".into());
        let codec = ff::encoder::find_by_name(&codec_name)
            .filter(|c| c.medium() == ff::media::Type::Video)
            .ok_or_else(|| {
                RunnerError::Usage(format!(
                    "--codec {codec_name}: this FFmpeg has no video encoder of that name (e.g. {})",
                    ROI_ENCODERS.join(", ")
                ))
            })?;
        if !has_muxer(&path) {
            return Err(RunnerError::Usage(format!(
                "--encode {}: FFmpeg knows no container for this file name (use .mkv, .mp4, .webm…)",
                path.display()
            )));
        }
        let reader_held = check_output(&path, args.force)?;
        Ok(Some(Encoder {
            path,
            codec,
            roi: args.roi_mode(),
            grid: CodecGrid::of(&codec_name),
            rects: 0,
            dropped: 0,
            codec_name,
            strength: args.roi_strength.unwrap_or(DEFAULT_STRENGTH),
            background: args.roi_background.unwrap_or(0.0),
            crf: args.crf,
            octx: None,
            open: None,
            frames: 0,
            first_pts: None,
            last_pts: -1,
            step: 33,
            reader_held,
        }))
    }

    /// The output file and the encoder for frames of `w × h`, with the
    /// settings ROI needs. Frames the encoder cannot take are refused
    /// before the file is created; a file this call created is removed
    /// again when the encoder cannot start.
    fn start(&mut self, w: u32, h: u32) -> Result<Opened, RunnerError> {
        let path = self.path.clone();
        if w % 2 == 1 || h % 2 == 1 {
            return Err(fail(
                &path,
                format!("frames of {w}x{h}: 4:2:0 encoding needs even sides"),
            ));
        }
        let existed = path.exists();
        let octx =
            ff::format::output(&path).map_err(|e| fail(&path, format!("cannot write it: {e}")))?;
        // The output holds the FIFO's write end now (a file has none).
        self.reader_held = None;
        let octx = self.octx.insert(octx);
        let started = start_on(octx, self.codec, &self.codec_name, self.crf, (w, h));
        if started.is_err() {
            // Nothing worth keeping was written: leave no empty file.
            self.octx = None;
            if !existed && std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                let _ = std::fs::remove_file(&path);
            }
        }
        started.map_err(|why| fail(&path, why))
    }

    /// Encodes one frame with `roi` as its side data.
    pub(crate) fn frame(&mut self, frame: &Frame, roi: FrameRoi<'_>) -> Result<(), RunnerError> {
        let (w, h) = frame.size();
        let (w, h) = (w as u32, h as u32);
        if self.open.is_none() {
            let opened = self.start(w, h)?;
            self.open = Some(opened);
        }
        let path = self.path.clone();
        let Some(o) = self.open.as_mut() else {
            return Err(fail(&path, "the encoder did not open"));
        };
        if o.size != (w, h) {
            return Err(fail(
                &path,
                format!(
                    "frame {} is {w}x{h}, the encode started at {}x{}",
                    frame.index, o.size.0, o.size.1
                ),
            ));
        }
        let stride = o.rgb.stride(0);
        let row = w as usize * 3;
        let src = frame
            .image
            .as_slice()
            .ok_or_else(|| fail(&path, "frame not contiguous"))?;
        let dst = o.rgb.data_mut(0);
        for (y, line) in src.chunks_exact(row).enumerate() {
            dst[y * stride..y * stride + row].copy_from_slice(line);
        }
        let mut yuv = ff::frame::Video::empty();
        o.scaler.run(&o.rgb, &mut yuv).map_err(|e| fail(&path, e))?;
        // Milliseconds from the first frame, strictly increasing.
        let t = frame.timestamp.unwrap_or(frame.index as f64 / 30.0);
        let ms = (t * 1000.0).round() as i64;
        let first = *self.first_pts.get_or_insert(ms);
        let pts = (ms - first).max(self.last_pts + 1);
        if self.last_pts >= 0 {
            self.step = pts - self.last_pts;
        }
        self.last_pts = pts;
        yuv.set_pts(Some(pts));
        let rois = match roi {
            FrameRoi::Nothing => Vec::new(),
            FrameRoi::Regions(regions) => {
                region_rois(regions, self.strength, self.background, (w, h))
            }
            FrameRoi::Map(map) => {
                let grid = self.grid.ok_or_else(|| {
                    fail(&path, format!("{} reads no ROI side data", self.codec_name))
                })?;
                let size = (w as usize, h as usize);
                let sent = blocks::map_rois(map, &grid, size, blocks::MAX_RECTS)
                    .map_err(|e| fail(&path, format!("frame {}: {}", frame.index, e.0)))?;
                self.rects += sent.rois.len() as u64;
                self.dropped += sent.dropped as u64;
                sent.rois.iter().map(to_av).collect()
            }
        };
        if !rois.is_empty() {
            attach(&mut yuv, &rois).ok_or_else(|| fail(&path, "cannot attach the side data"))?;
        }
        o.enc
            .send_frame(&yuv)
            .map_err(|e| fail(&path, format!("encoding frame {}: {e}", frame.index)))?;
        self.frames += 1;
        self.drain()
    }

    fn drain(&mut self) -> Result<(), RunnerError> {
        let path = self.path.clone();
        let Some(o) = self.open.as_mut() else {
            return Ok(());
        };
        let Some(octx) = self.octx.as_mut() else {
            return Err(fail(&path, "the output is not open"));
        };
        let mut packet = ff::Packet::empty();
        while o.enc.receive_packet(&mut packet).is_ok() {
            packet.set_stream(0);
            if packet.duration() <= 0 {
                packet.set_duration(self.step);
            }
            packet.rescale_ts(TIME_BASE, o.stream_tb);
            // Each packet is written through at once and its error checked:
            // a full disk stops the run at the first packet that does not
            // fit, not when the file is closed.
            packet
                .write_interleaved(octx)
                .and_then(|()| flushed(octx))
                .map_err(|e| fail(&path, format!("writing: {e}")))?;
        }
        Ok(())
    }

    /// Flushes the encoder and closes the file.
    pub(crate) fn finish(mut self) -> Result<EncodeReport, RunnerError> {
        let path = self.path.clone();
        if let Some(o) = self.open.as_mut() {
            o.enc.send_eof().map_err(|e| fail(&path, e))?;
            self.drain()?;
            if let Some(octx) = self.octx.as_mut() {
                octx.write_trailer()
                    .and_then(|()| flushed(octx))
                    .map_err(|e| fail(&path, format!("closing: {e}")))?;
            }
        }
        // The file is closed when the context drops.
        let frames = self.frames;
        let seconds = if frames > 1 {
            (self.last_pts + self.step) as f64 / 1000.0
        } else {
            frames as f64 / 30.0
        };
        let (codec, roi) = (self.codec_name.clone(), self.roi);
        let (rects, dropped) = (self.rects, self.dropped);
        drop(self);
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        Ok(EncodeReport {
            path,
            codec,
            roi,
            frames,
            bytes,
            seconds,
            rects,
            dropped,
        })
    }
}

/// Adds the video stream to `octx`, opens the encoder for `w × h` with the
/// settings ROI needs and writes the header (flushed, so a file that cannot
/// be written fails here, at the first frame).
fn start_on(
    octx: &mut ff::format::context::Output,
    codec: ff::Codec,
    codec_name: &str,
    crf: Option<u32>,
    (w, h): (u32, u32),
) -> Result<Opened, String> {
    let global = octx
        .format()
        .flags()
        .contains(ff::format::flag::Flags::GLOBAL_HEADER);
    octx.add_stream(codec).map_err(|e| e.to_string())?;
    let mut enc = ff::codec::context::Context::new_with_codec(codec)
        .encoder()
        .video()
        .map_err(|e| e.to_string())?;
    enc.set_width(w);
    enc.set_height(h);
    enc.set_format(Pixel::YUV420P);
    enc.set_time_base(TIME_BASE);
    enc.set_frame_rate(Some((30, 1)));
    if global {
        enc.set_flags(ff::codec::flag::Flags::GLOBAL_HEADER);
    }
    let mut opts = ff::Dictionary::new();
    match codec_name {
        "libx264" => {
            opts.set("crf", &crf.unwrap_or(23).to_string());
            opts.set("preset", "medium");
            // Variance AQ: x264 ignores the regions without AQ.
            opts.set("aq-mode", "1");
        }
        "libx265" => {
            opts.set("crf", &crf.unwrap_or(28).to_string());
            opts.set("preset", "medium");
            opts.set("x265-params", "aq-mode=1:log-level=error");
        }
        "libvpx-vp9" | "libvpx" => {
            // Constant quality (b:v 0), and what libvpx's ROI
            // needs: real-time, cpu-used >= 5, no AQ of its own.
            opts.set("crf", &crf.unwrap_or(32).to_string());
            opts.set("b", "0");
            opts.set("deadline", "realtime");
            opts.set("cpu-used", "5");
            opts.set("aq-mode", "0");
        }
        _ => {
            if let Some(crf) = crf {
                opts.set("crf", &crf.to_string());
            }
        }
    }
    let enc = enc
        .open_with(opts)
        .map_err(|e| format!("{codec_name} refused {w}x{h}: {e}"))?;
    let mut st = octx.stream_mut(0).ok_or("no stream")?;
    st.set_parameters(ff::codec::Parameters::from(&enc));
    st.set_time_base(TIME_BASE);
    octx.write_header()
        .map_err(|e| format!("writing the header: {e}"))?;
    flushed(octx).map_err(|e| format!("writing the header: {e}"))?;
    let stream_tb = octx.stream(0).map(|s| s.time_base()).ok_or("no stream")?;
    let scaler = ff::software::scaling::Context::get(
        Pixel::RGB24,
        w,
        h,
        Pixel::YUV420P,
        w,
        h,
        ff::software::scaling::Flags::BILINEAR | ff::software::scaling::Flags::ACCURATE_RND,
    )
    .map_err(|e| e.to_string())?;
    Ok(Opened {
        enc,
        scaler,
        rgb: ff::frame::Video::new(Pixel::RGB24, w, h),
        size: (w, h),
        stream_tb,
    })
}

/// Whether FFmpeg has a muxer for `path`'s name (what creating the output
/// would look up), without creating the file.
fn has_muxer(path: &Path) -> bool {
    let Some(name) = path.to_str().and_then(|p| std::ffi::CString::new(p).ok()) else {
        return false;
    };
    // SAFETY: `av_guess_format` only reads the NUL-terminated name (the
    // other two arguments may be null) and returns a pointer to a static
    // muxer description, or null.
    !unsafe { ff::ffi::av_guess_format(std::ptr::null(), name.as_ptr(), std::ptr::null()) }
        .is_null()
}

/// `--encode`'s path before anything runs. The rule, the same for every
/// kind of path: without `force` the path must name nothing yet — an
/// existing file, symbolic link (even one to `/dev/null`), device, FIFO or
/// socket is refused, so a mistyped name never overwrites a video or
/// blocks on a pipe. With `force` a regular file is replaced, a device
/// written to, and a FIFO written to only while a program reads it: it is
/// opened here without blocking (no reader: refused at once) and the
/// returned handle is held until the encoder opens its own, so the reader
/// never sees the pipe's end in between. A folder or a socket is always
/// refused. The folder the file goes in must exist (checked here; whether
/// the file can be created is known when it is, on the first frame).
fn check_output(path: &Path, force: bool) -> Result<Option<std::fs::File>, RunnerError> {
    let refuse = |why: String| {
        Err(RunnerError::Usage(format!(
            "--encode {}: {why}",
            path.display()
        )))
    };
    let Ok(link) = std::fs::symlink_metadata(path) else {
        return match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(dir) if !dir.is_dir() => Err(fail(path, "cannot write it: no such folder")),
            _ => Ok(None),
        };
    };
    // What the path leads to; a dangling link leads to a file it creates.
    let target = std::fs::metadata(path).ok();
    let kind = target
        .as_ref()
        .map_or("a symbolic link to nothing", |m| kind_of(&m.file_type()));
    let through = if link.file_type().is_symlink() && target.is_some() {
        format!("a symbolic link to {kind}")
    } else {
        kind.to_string()
    };
    if target.as_ref().is_some_and(|m| m.is_dir()) || kind == "a socket" {
        return refuse(format!("it is {through}; --encode writes a file"));
    }
    if !force {
        return refuse(if through == "a regular file" {
            "the file exists (remove it, or add --force to overwrite it)".to_string()
        } else {
            format!("it exists ({through}; add --force to write to it)")
        });
    }
    if kind != "a FIFO" {
        return Ok(None);
    }
    open_fifo(path)
        .map(Some)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => RunnerError::Usage(format!(
                "--encode {}: it is {through} that no program reads",
                path.display()
            )),
            _ => fail(path, format!("cannot write it: {e}")),
        })
}

/// The write end of the FIFO at `path`, if a program holds its read end:
/// without a reader the open fails at once (ENXIO) instead of waiting for
/// one.
fn open_fifo(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// Writes out what the muxer buffered for `octx` and returns the first
/// write error the output met, if any: FFmpeg's I/O layer keeps a failed
/// write's error in its context, and a muxer that buffers returns success
/// for packets whose bytes have not reached the file yet.
fn flushed(octx: &mut ff::format::context::Output) -> Result<(), ff::Error> {
    // SAFETY: `octx` is a live output context whose `pb` was opened by
    // `format::output` (or is null, checked); `avio_flush` and the `error`
    // field are FFmpeg's public I/O API, used from this thread only.
    let error = unsafe {
        let pb = (*octx.as_mut_ptr()).pb;
        if pb.is_null() {
            return Ok(());
        }
        ff::ffi::avio_flush(pb);
        (*pb).error
    };
    if error < 0 {
        return Err(ff::Error::from(error));
    }
    Ok(())
}

/// One `AVRegionOfInterest` per region, in the order given (most important
/// first), clamped to the frame; then, with a `background` offset, the whole
/// frame at `+background` — last, so the regions take precedence where they
/// overlap it (the encoders apply the list from its end).
fn region_rois(
    regions: &[Region],
    strength: f32,
    background: f32,
    (w, h): (u32, u32),
) -> Vec<ff::ffi::AVRegionOfInterest> {
    const DEN: i32 = 1000;
    let rois = regions.iter().map(|r| {
        let b = r.bbox;
        let clamp = |v: usize, max: u32| v.min(max as usize) as i32;
        to_av(&blocks::Roi {
            top: clamp(b.y, h),
            bottom: clamp(b.y + b.height, h),
            left: clamp(b.x, w),
            right: clamp(b.x + b.width, w),
            num: (r.qp_offset(strength) * DEN as f32).round() as i32,
            den: DEN,
        })
    });
    let whole = (background > 0.0 && !regions.is_empty()).then(|| {
        to_av(&blocks::Roi {
            top: 0,
            bottom: h as i32,
            left: 0,
            right: w as i32,
            num: (background * DEN as f32).round() as i32,
            den: DEN,
        })
    });
    rois.chain(whole).collect()
}

fn to_av(r: &blocks::Roi) -> ff::ffi::AVRegionOfInterest {
    ff::ffi::AVRegionOfInterest {
        self_size: std::mem::size_of::<ff::ffi::AVRegionOfInterest>() as u32,
        top: r.top,
        bottom: r.bottom,
        left: r.left,
        right: r.right,
        qoffset: ff::ffi::AVRational {
            num: r.num,
            den: r.den,
        },
    }
}

/// Adds `rois` as the frame's `AVRegionOfInterest` side data.
fn attach(frame: &mut ff::frame::Video, rois: &[ff::ffi::AVRegionOfInterest]) -> Option<()> {
    let bytes = std::mem::size_of_val(rois);
    let mut sd = frame.new_side_data(ff::frame::side_data::Type::REGIONS_OF_INTEREST, bytes)?;
    // SAFETY: `new_side_data` allocated `bytes` bytes for this side data
    // (checked below); the source is a live slice of exactly that many
    // bytes, and the regions do not overlap FFmpeg's buffer.
    unsafe {
        let sd = sd.as_mut_ptr();
        if (*sd).data.is_null() || ((*sd).size as usize) < bytes {
            return None;
        }
        std::ptr::copy_nonoverlapping(rois.as_ptr().cast::<u8>(), (*sd).data, bytes);
    }
    Some(())
}
