# libgpudoctor: the C ABI for training scripts (being written).
