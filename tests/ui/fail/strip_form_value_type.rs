// A strip form whose value is not the node's type (the gray form on the
// centre prior, a map of `f32`): one error, at the form.
use cortex::cortex_graph;
use cortex::ops::strip::GrayStrip;
use cortex::ops::{self, CenterParams, GrayImage, RgbFrame, ScoreMap};

cortex_graph! {
    pipeline P {
        input frame: RgbFrame;
        #[compilable(strip = GrayStrip)]
        node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
        #[compilable(strip = GrayStrip)]
        node center: ScoreMap = ops::center_crop_into(gray, &CenterParams::DEFAULT, &mut center)?;
        output center: ScoreMap;
    }
}

fn main() {}
