// A strip form that is no form at all: one error, at the expression.
use cortex::cortex_graph;
use cortex::ops::strip::GrayStrip;
use cortex::ops::{self, GrayImage, RgbFrame};

cortex_graph! {
    pipeline P {
        input frame: RgbFrame;
        #[compilable(strip = 3)]
        node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
        #[compilable(strip = GrayStrip)]
        node again: GrayImage = ops::to_gray_into(frame, &mut again)?;
        output gray: GrayImage, again: GrayImage;
    }
}

fn main() {}
