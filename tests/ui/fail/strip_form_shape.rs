use cortex::cortex_graph;
use cortex::ops::strip::{BlurForm, GrayStrip};
use cortex::ops::{self, BlurParams, GrayImage, RgbFrame};

cortex_graph! {
    pipeline P {
        input frame: RgbFrame;
        // A map form declared as a reduction, and a reduction as a map.
        #[compilable(reduce = GrayStrip)]
        node gray: GrayImage = ops::to_gray_into(frame, &mut gray)?;
        #[compilable(strip = BlurForm(BlurParams::DEFAULT))]
        node blur = ops::blur_detector(gray)?;
        output blur: ops::BlurReport;
    }
}

fn main() {}
