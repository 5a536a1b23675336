use cortex::cortex_graph;
use cortex::ops::{self, GrayImage, RgbFrame};

cortex_graph! {
    pipeline P {
        input frame: RgbFrame;
        #[compilable(strip)]
        node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
        output gray: GrayImage;
    }
}

fn main() {}
