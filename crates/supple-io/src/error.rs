//! The error type shared by Supple's file readers and writers.

use std::path::{Path, PathBuf};

/// A failure to read or write a file, naming the file (and, for parse errors, the 1-based line).
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The operating system refused an operation on `path`.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The contents of `path` are malformed at `line` (1-based).
    #[error("{path}:{line}: {message}")]
    Parse {
        /// The file concerned.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The file parsed but describes an invalid mesh.
    #[error("{path}: {source}")]
    Mesh {
        /// The file concerned (for TetGen input, the `.ele` file).
        path: PathBuf,
        /// The mesh validation error.
        #[source]
        source: supple::mesh::MeshError,
    },
}

impl IoError {
    /// An [`IoError::Io`] for `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// An [`IoError::Parse`] for `path` at 1-based `line`.
    pub fn parse(path: &Path, line: usize, message: impl Into<String>) -> Self {
        Self::Parse {
            path: path.to_path_buf(),
            line,
            message: message.into(),
        }
    }

    /// An [`IoError::Mesh`] for `path`.
    pub fn mesh(path: &Path, source: supple::mesh::MeshError) -> Self {
        Self::Mesh {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            Self::Io { path, .. } | Self::Parse { path, .. } | Self::Mesh { path, .. } => path,
        }
    }
}
