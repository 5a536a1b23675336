//! Text-likelihood map from MSER regions — owned by the text-ROI issue.
