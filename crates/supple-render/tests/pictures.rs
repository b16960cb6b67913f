//! Pictures of known scenes: size, content, silhouette coverage, determinism, GIF frames,
//! chart PNGs.

use nalgebra::Vector3;
use supple_render::plot::{draw_chart, Chart, Panel, Series};
use supple_render::{
    gif_schedule, render, Camera, ColorBar, GifWriter, Ground, Image, Paint, Surface, View,
};

/// The unit cube's 8 corners and 12 outward triangles.
fn unit_cube() -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let p = (0..8)
        .map(|i| [(i & 1) as f32, ((i >> 1) & 1) as f32, ((i >> 2) & 1) as f32])
        .collect();
    let quads = [
        [0, 2, 3, 1], // z = 0
        [4, 5, 7, 6], // z = 1
        [0, 1, 5, 4], // y = 0
        [2, 6, 7, 3], // y = 1
        [0, 4, 6, 2], // x = 0
        [1, 3, 7, 5], // x = 1
    ];
    let t = quads
        .iter()
        .flat_map(|q: &[u32; 4]| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
        .collect();
    (p, t)
}

fn default_view(w: u32, h: u32) -> View {
    let camera = Camera::framing(
        Vector3::zeros(),
        Vector3::repeat(1.0),
        w as f64 / h as f64,
        30.0,
        25.0,
        1.0,
    );
    View::new(camera, w, h)
}

/// Fraction of pixels that differ from the background of an empty render.
fn coverage(img: &Image, empty: &Image) -> f64 {
    let differ = img
        .rgb
        .chunks(3)
        .zip(empty.rgb.chunks(3))
        .filter(|(a, b)| a != b)
        .count();
    differ as f64 / (img.width * img.height) as f64
}

#[test]
fn unit_cube_frame_has_the_size_and_a_plausible_silhouette() {
    let (p, t) = unit_cube();
    let view = default_view(320, 240);
    let surface = Surface {
        positions: &p,
        triangles: &t,
        paint: Paint::Solid([78, 121, 167]),
    };
    let img = render(&[surface], &view);
    assert_eq!(
        (img.width, img.height, img.rgb.len()),
        (320, 240, 320 * 240 * 3)
    );
    let first = img.pixel(0, 0);
    assert!(img.rgb.chunks(3).any(|c| c != first), "uniform image");
    let empty = render(&[], &view);
    let f = coverage(&img, &empty);
    assert!(
        (0.05..0.60).contains(&f),
        "cube covers {:.1}% of the image",
        100.0 * f
    );
    // The centre of the image shows the cube, a corner does not.
    assert_ne!(img.pixel(160, 120), empty.pixel(160, 120));
    assert_eq!(img.pixel(2, 2), empty.pixel(2, 2));
    // Same input, same bytes.
    let again = render(&[surface], &view);
    assert_eq!(img.encode_png().unwrap(), again.encode_png().unwrap());
    // Three faces are visible from the default camera, lit differently.
    let mut shades: Vec<[u8; 3]> = img
        .rgb
        .chunks(3)
        .filter(|c| c[2] > c[0] + 30)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    shades.sort_unstable();
    shades.dedup();
    assert!(shades.len() >= 3, "{shades:?}");
}

#[test]
fn fields_colour_bar_legend_ground_and_png_round_trip() {
    let (p, t) = unit_cube();
    let values: Vec<f32> = p.iter().map(|q| q[1]).collect();
    let faces: Vec<f32> = (0..t.len()).map(|f| f as f32).collect();
    let mut view = default_view(200, 150);
    view.color_bar = Some(ColorBar {
        min: 0.0,
        max: 1.0,
        label: "|u| (m)".into(),
    });
    view.legend = vec![("cube".into(), [200, 0, 0])];
    view.caption = Some("t = 0.00 s".into());
    view.ground = Some(Ground {
        point: Vector3::zeros(),
        normal: Vector3::y(),
        spacing: 0.25,
        half_extent: 2.0,
    });
    view.camera = Camera::framing(
        Vector3::zeros(),
        Vector3::repeat(1.0),
        view.scene_aspect(),
        30.0,
        25.0,
        1.0,
    );
    for paint in [Paint::VertexField(&values), Paint::FaceField(&faces)] {
        let img = render(
            &[Surface {
                positions: &p,
                triangles: &t,
                paint,
            }],
            &view,
        );
        let bytes = img.encode_png().unwrap();
        assert_eq!(Image::decode_png(&bytes).unwrap(), img);
        if let Ok(dir) = std::env::var("SUPPLE_TEST_IMAGES") {
            img.write_png(&std::path::Path::new(&dir).join(format!("field_{}.png", bytes.len())))
                .unwrap();
        }
        // The colour bar (right third) holds both ends of the map.
        let right: Vec<[u8; 3]> = (0..150)
            .flat_map(|y| (134..200).map(move |x| (x, y)))
            .map(|(x, y)| img.pixel(x, y))
            .collect();
        assert!(
            right.contains(&[253, 231, 37]) && right.contains(&[68, 1, 84]),
            "no colour bar"
        );
    }
}

#[test]
fn gif_decodes_to_the_scheduled_frames() {
    let (p, t) = unit_cube();
    let times: Vec<f64> = (0..=20).map(|k| k as f64 * 0.05).collect();
    let schedule = gif_schedule(&times, 10.0);
    assert_eq!(schedule.len(), 11);
    let dir = std::env::temp_dir().join(format!("supple_render_gif_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.gif");
    let mut gif = GifWriter::create(&path, 64, 48).unwrap();
    let view = default_view(64, 48);
    let frames: Vec<(Image, u16)> = schedule
        .iter()
        .map(|&(i, delay)| {
            let q: Vec<[f32; 3]> = p
                .iter()
                .map(|v| [v[0], v[1] - times[i] as f32, v[2]])
                .collect();
            (
                render(
                    &[Surface {
                        positions: &q,
                        triangles: &t,
                        paint: Paint::Solid([200, 50, 50]),
                    }],
                    &view,
                ),
                delay,
            )
        })
        .collect();
    gif.add_frames(&frames).unwrap();
    gif.finish().unwrap();
    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::RGBA);
    let mut dec = opts.read_info(std::fs::File::open(&path).unwrap()).unwrap();
    assert_eq!((dec.width(), dec.height()), (64, 48));
    let mut n = 0;
    while let Some(frame) = dec.read_next_frame().unwrap() {
        assert_eq!(frame.delay, 10);
        n += 1;
    }
    assert_eq!(n, 11);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn chart_is_a_png_with_lines() {
    let series = |name: &str, k: f64| Series {
        name: name.into(),
        points: (0..50)
            .map(|i| (i as f64 * 0.1, (k * i as f64 * 0.1).sin()))
            .collect(),
    };
    let chart = Chart {
        x_label: "time (s)".into(),
        panels: vec![
            Panel {
                title: "two".into(),
                y_label: "y (m)".into(),
                series: vec![series("a", 1.0), series("b", 2.0)],
            },
            Panel {
                title: String::new(),
                y_label: "z (m)".into(),
                series: vec![
                    series("c", 3.0),
                    Series {
                        name: "empty".into(),
                        points: vec![(f64::NAN, 1.0)],
                    },
                ],
            },
        ],
        width: 400,
        height: 300,
    };
    let img = draw_chart(&chart).unwrap();
    let back = Image::decode_png(&img.encode_png().unwrap()).unwrap();
    assert_eq!((back.width, back.height), (400, 300));
    // Some pixels carry the first series' colour.
    assert!(back.rgb.chunks(3).any(|c| c == [78, 121, 167]));
}
