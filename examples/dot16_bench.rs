use onemodel::recognizer::dot16::{gemm16, gemm_nt};
fn cpu() -> f64 {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    s.split_whitespace().next().unwrap().parse::<f64>().unwrap() * 1e-9
}
fn main() {
    for (m, n, k) in [(2048usize, 64usize, 288usize), (64, 288, 2048), (2048, 288, 64), (1, 512, 128), (64, 512, 384), (512, 384, 64), (8192, 32, 16)] {
        let a = vec![0.5f32; m * k];
        let b = vec![0.25f32; n * k];
        let mut c = vec![0f32; m * n];
        let reps = (4e8 / (m * n * k) as f64).max(1.0) as usize;
        let t = cpu();
        for _ in 0..reps { gemm_nt(m, n, k, &a, k, &b, k, &mut c, n); }
        let s1 = cpu() - t;
        let t = cpu();
        for _ in 0..reps { gemm16(m, n, k, &a, k, 1, &b, n, &mut c, n); }
        let s2 = cpu() - t;
        let f = (m * n * k * reps) as f64 / 1e9;
        println!("{m}x{n}x{k}: nt {:.2}  g16 {:.2} GFMA/s (cpu time)", f / s1, f / s2);
    }
}
