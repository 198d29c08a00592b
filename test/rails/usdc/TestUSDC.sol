// SPDX-License-Identifier: MIT
// The tests' stand-in for USDC: OpenZeppelin's ERC-20 with 6 decimals, mintable and
// pausable by its owner (a paused token reverts every transfer, as Circle's can).
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Pausable} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Pausable.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

contract TestUSDC is ERC20Pausable, Ownable {
    constructor() ERC20("USD Coin (test)", "USDC") Ownable(msg.sender) {}

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    function pause() external onlyOwner {
        _pause();
    }

    function unpause() external onlyOwner {
        _unpause();
    }

    function _update(address from, address to, uint256 value) internal override(ERC20Pausable) {
        super._update(from, to, value);
    }
}

// A Chainlink-style price feed (AggregatorV3Interface's latestRoundData) whose answer the test sets.
contract MockAggregator {
    uint8 public immutable decimals;
    int256 private answer;
    uint80 private round;
    uint256 private updated;

    constructor(uint8 decimals_, int256 answer_) {
        decimals = decimals_;
        set(answer_);
    }

    function set(int256 answer_) public {
        answer = answer_;
        round += 1;
        updated = block.timestamp;
    }

    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        return (round, answer, updated, updated, round);
    }
}
