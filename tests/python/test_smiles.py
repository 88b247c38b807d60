"""tessera.kernels.from_smiles: molecules through RDKit in the C++ core, hand-checked graphs, errors
naming the input, and a Gram matrix of molecules (symmetric, positive diagonal, aromatic benzene
equal to its Kekule form). Skipped when the library was built without RDKit."""
import numpy as np
import pytest
import torch

import tessera  # noqa: F401  (loads the op library)
from tessera.kernels import MarginalizedGraphKernel, from_smiles


@pytest.fixture(scope="module", autouse=True)
def rdkit_build():
    if not hasattr(torch.ops.tessera, "graph_from_smiles"):
        pytest.skip("the loaded libtessera_torch.so has no graph_from_smiles op (an older build)")
    try:
        from_smiles(["C"])
    except RuntimeError as e:
        if "without RDKit" in str(e):
            pytest.skip("tessera was built without RDKit (install librdkit-dev and rebuild)")
        raise


def test_benzene_and_ethanol():
    benzene, ethanol = from_smiles(["c1ccccc1", "CCO"])
    assert benzene.n == 6 and benzene.col.numel() == 12
    assert benzene.node_labels.tolist() == [1006] * 6  # 6 + 1000 * aromatic
    assert benzene.edge_labels.tolist() == [14] * 12   # aromatic (4) + 10 * conjugated
    assert benzene.weight is None
    assert benzene.node_attrs.shape == (6, 4)
    assert ethanol.node_labels.tolist() == [6, 6, 8]
    assert ethanol.rowptr.tolist() == [0, 1, 3, 4] and ethanol.col.tolist() == [1, 0, 2, 1]
    assert ethanol.node_attrs[:, 1].tolist() == [3.0, 2.0, 1.0]  # implicit hydrogens


def test_charges_and_salts():
    nh4, acetate, salt = from_smiles(["[NH4+]", "CC(=O)[O-]", "[Na+].[Cl-]"])
    assert nh4.n == 1 and nh4.col.numel() == 0 and nh4.node_labels.tolist() == [10007]
    assert acetate.node_labels.tolist() == [6, 6, 8, 8 - 10000]
    assert salt.n == 2 and salt.col.numel() == 0 and salt.node_labels.tolist() == [10011, 17 - 10000]


@pytest.mark.parametrize("bad", ["C1CC", "C(C", "CN(C)(C)(C)C", ""])
def test_invalid_smiles_name_the_input(bad):
    with pytest.raises(RuntimeError, match="invalid SMILES at index 1"):
        from_smiles(["CCO", bad])
    with pytest.raises(TypeError):
        from_smiles("CCO")


def test_gram_of_molecules():
    mols = from_smiles(["c1ccccc1", "C1=CC=CC=C1", "CCO", "CC(=O)[O-].[Na+]", "c1ccncc1"])
    K = np.asarray(MarginalizedGraphKernel(node_kernel="delta:0.5", edge_kernel="delta:0.5", q=0.05)(mols))
    assert K.shape == (5, 5)
    assert np.all(np.isfinite(K)) and np.array_equal(K, K.T) and np.all(np.diag(K) > 0)
    assert abs(K[0, 1] - K[0, 0]) <= 1e-9 * K[0, 0]
    assert K[0, 2] < K[0, 0]
